package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// DashboardFile is where the chart keeps the dashboard; its ConfigMap carries it
// to Grafana's sidecar, and it imports on its own (Dashboards → Import).
const DashboardFile = "helm/callbus/dashboards/callbus.json"

// DashboardUID is the dashboard's stable uid, so that links and provisioning
// updates find it again.
const DashboardUID = "callbus-overview"

// acct selects the accounts chosen in the dashboard's account variable.
const acct = `account=~"$account"`

// datasource is the Prometheus chosen in the dashboard's datasource variable: the
// same JSON works provisioned and imported.
var datasource = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// Dashboard returns the Grafana dashboard of callbus as indented JSON ending in a
// newline, built with grafana-foundation-sdk: per account (the account label)
// its leader, effective against target intervals, the rate budget against the
// share and X-RateLimit-Remaining, 429s and 5xx, outbox, relay lag and watermark age, detection
// delay percentiles and events per type, rejected records and Redis/NATS errors.
func Dashboard() ([]byte, error) {
	b := dashboard.NewDashboardBuilder("callbus").
		Uid(DashboardUID).
		Description("callbus poller: leadership, polling under the rate budget, outbox and relay, events and their detection delay, per account.").
		Tags([]string{"callbus"}).
		Refresh("30s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")).
		WithVariable(dashboard.NewQueryVariableBuilder("account").
			Label("Account").
			Datasource(datasource).
			Query(dashboard.StringOrMap{String: cog.ToPtr("label_values(callbus_leader, account)")}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).
			IncludeAll(true).
			AllValue(".*"))
	for _, r := range dashboardRows() {
		b = b.WithRow(dashboard.NewRowBuilder(r.title))
		for _, p := range r.panels {
			b = b.WithPanel(p)
		}
	}
	d, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build dashboard: %w", err)
	}
	for i, p := range d.Panels { // ids in layout order: stable, and unique as Grafana wants them
		id := uint32(i + 1)
		if p.RowPanel != nil {
			p.RowPanel.Id = id
		} else if p.Panel != nil {
			p.Panel.Id = &id
		}
	}
	compact, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("marshal dashboard: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, fmt.Errorf("indent dashboard: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

type dashboardRow struct {
	title  string
	panels []cog.Builder[dashboard.Panel]
}

// dashboardRows are the dashboard's rows and panels, top to bottom.
func dashboardRows() []dashboardRow {
	return []dashboardRow{
		{"Leadership", []cog.Builder[dashboard.Panel]{
			leadersStat(),
			graph("Leader per replica", "1 on the replica holding the account's Redis lease, 0 on standby.", "short", 16,
				query(`max by (account, instance) (callbus_leader{`+acct+`})`, "{{account}} {{instance}}")),
		}},
		{"Polling under the rate budget", []cog.Builder[dashboard.Panel]{
			graph("Effective vs target interval", "Effective poll interval per resource (after sharing the budget) against the configured target: lower priorities stretch first.", "s", 12,
				query(`max by (account, resource) (callbus_poll_interval_seconds{`+acct+`})`, "{{account}} {{resource}} effective"),
				query(`max by (account, resource) (callbus_poll_target_interval_seconds{`+acct+`})`, "{{account}} {{resource}} target")),
			graph("Requests a minute vs budget", "API requests a minute against callbus's budget (share × the account's limit) and the account's limit.", "short", 12,
				query(`sum by (account) (rate(callbus_api_requests_total{`+acct+`}[$__rate_interval])) * 60`, "{{account}} requests/min"),
				query(`max by (account) (callbus_rate_budget_requests{`+acct+`})`, "{{account}} budget"),
				query(`max by (account) (callbus_api_rate_limit{`+acct+`})`, "{{account}} account limit")),
			graph("Budget used vs share", "Share of the account's limit used by callbus in the current minute, against its configured share.", "percentunit", 12,
				query(`max by (account) (callbus_rate_budget_used_ratio{`+acct+`}) * on (account) max by (account) (callbus_rate_budget_share_ratio{`+acct+`})`, "{{account}} used"),
				query(`max by (account) (callbus_rate_budget_share_ratio{`+acct+`})`, "{{account}} share")),
			graph("X-RateLimit-Remaining", "Requests left in the API's current window, for every integration of the account.", "short", 12,
				query(`min by (account) (callbus_api_rate_limit_remaining{`+acct+`})`, "{{account}}")),
			graph("429s and 5xx a minute", "Responses 429 Too Many Requests and 5xx, and requests with no response (status 0); 0 when there are none.", "short", 12,
				query(statusRate(`"429"`), "{{account}} 429"),
				query(statusRate(`~"5..|0"`), "{{account}} 5xx or none")),
			graph("API requests a minute per resource", "Requests spent by the poll cycles of each resource.", "short", 12,
				query(`sum by (account, resource) (rate(callbus_poll_requests_total{`+acct+`}[$__rate_interval])) * 60`, "{{account}} {{resource}}")),
		}},
		{"Outbox and relay", []cog.Builder[dashboard.Panel]{
			graph("Outbox depth", "Events committed in Redis and not yet acknowledged by JetStream.", "short", 12,
				query(`max by (account) (callbus_outbox_depth{`+acct+`})`, "{{account}}")),
			graph("Relay lag", "Age of the oldest event waiting in the outbox (0 when empty).", "s", 12,
				query(`max by (account) (callbus_relay_lag_seconds{`+acct+`})`, "{{account}}")),
			graph("Watermark age", "Time since JetStream acknowledged the account's latest watermark (account.watermark), against the CallbusWatermarkStalled threshold (three intervals and a minute): a sawtooth below the threshold while the poller and the relay work, a ramp once either stalls.", "s", 24,
				query(`time() - max by (account) (max_over_time(callbus_watermark_published_timestamp_seconds{`+acct+`}[1h]))`, "{{account}} age"),
				query(`3 * max by (account) (max_over_time(callbus_watermark_interval_seconds{`+acct+`}[1h])) + 60`, "{{account}} alert threshold")),
		}},
		{"Events", []cog.Builder[dashboard.Panel]{
			graph("Detection delay percentiles per type", "Publish time minus the change's time, where the API gives one (users and teams carry none: only the relay's part).", "s", 12,
				query(delayQuantile("0.5"), "{{account}} {{type}} p50"),
				query(delayQuantile("0.95"), "{{account}} {{type}} p95"),
				query(delayQuantile("0.99"), "{{account}} {{type}} p99")),
			graph("Events a minute per type", "Events acknowledged by JetStream.", "short", 12,
				query(`sum by (account, type) (rate(callbus_events_published_total{`+acct+`}[$__rate_interval])) * 60`, "{{account}} {{type}}")),
			graph("Rejected records", "API records rejected (not diffed) per resource and reason: their changes are not published.", "short", 12,
				query(`sum by (account, resource, reason) (increase(callbus_records_rejected_total{`+acct+`}[$__rate_interval]))`, "{{account}} {{resource}} {{reason}}")),
			graph("Redis and NATS errors a minute", "Failed Redis commands, and failed publishes or outbox reads of the relay (each retried).", "short", 12,
				query(`sum by (account) (rate(callbus_redis_errors_total{`+acct+`}[$__rate_interval])) * 60`, "{{account}} Redis"),
				query(`sum by (account) (rate(callbus_publish_errors_total{`+acct+`}[$__rate_interval])) * 60`, "{{account}} NATS")),
		}},
	}
}

// statusRate is the responses a minute with a status matching match (`"429"`
// or `~"5.."`), or 0 for an account that had none, so the panel shows a flat
// line rather than "No data" in good times.
func statusRate(match string) string {
	return `sum by (account) (rate(callbus_api_requests_total{` + acct + `,status=` + match + `}[$__rate_interval])) * 60` +
		` or sum by (account) (rate(callbus_api_requests_total{` + acct + `}[$__rate_interval])) * 0`
}

func delayQuantile(q string) string {
	return `histogram_quantile(` + q + `, sum by (account, type, le) (rate(callbus_detection_delay_seconds_bucket{` + acct + `}[$__rate_interval])))`
}

// leadersStat is the number of replicas leading each account: 1 is healthy (green),
// 0 or 2 and more red.
func leadersStat() *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title("Leaders per account").
		Description("Replicas holding each account's lease: exactly 1 is healthy.").
		Datasource(datasource).
		Height(6).Span(8).
		Unit("short").
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		Thresholds(dashboard.NewThresholdsConfigBuilder().
			Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{
				{Color: "red", Value: nil},
				{Color: "green", Value: cog.ToPtr(1.0)},
				{Color: "red", Value: cog.ToPtr(2.0)},
			})).
		WithTarget(query(`sum by (account) (callbus_leader{`+acct+`})`, "{{account}}").RefId("A"))
}

// graph is a time series panel of width span (of 24) with the queries.
func graph(title, description, unit string, span uint32, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasource).
		Height(8).Span(span).
		Unit(unit).
		Min(0).
		FillOpacity(10).
		Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom).ShowLegend(true))
	for i, q := range queries {
		p = p.WithTarget(q.RefId(string(rune('A' + i))))
	}
	return p
}

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(expr).LegendFormat(legend).Datasource(datasource).Range()
}
