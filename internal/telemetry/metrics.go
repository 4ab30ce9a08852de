// Package telemetry sets up callbus's metrics (OpenTelemetry with the Prometheus
// exporter, on the service's own registry) and traces (OTLP when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT is set, otherwise none). It creates every instrument,
// including the gauges read at scrape time (ObserveState), and knows nothing of the
// parts it measures: they report through observers the service wires to it.
// Nothing is global: the service passes the instruments and the tracer on.
package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
)

// Metrics are the service's instruments. Prometheus names (units and _total
// suffixes added by the exporter) are in the comments.
type Metrics struct {
	APIRequests     metric.Int64Counter     // callbus_api_requests_total{operation,status}
	RateLimitTotal  metric.Int64Gauge       // callbus_api_rate_limit: the account's limit per window
	RateLimitRemain metric.Int64Gauge       // callbus_api_rate_limit_remaining
	Interval        metric.Float64Gauge     // callbus_poll_interval_seconds{resource}: effective interval
	TargetInterval  metric.Float64Gauge     // callbus_poll_target_interval_seconds{resource}: configured interval
	CycleDuration   metric.Float64Histogram // callbus_poll_cycle_duration_seconds{resource,outcome}
	CycleRequests   metric.Int64Counter     // callbus_poll_requests_total{resource}: API requests spent
	EventsPublished metric.Int64Counter     // callbus_events_published_total{type}
	DetectionDelay  metric.Float64Histogram // callbus_detection_delay_seconds{type}
	TruncatedSize   metric.Int64Histogram   // callbus_events_truncated_size_bytes{type}: original size of events published reduced
	Leader          metric.Int64Gauge       // callbus_leader: 1 while this replica holds the lease
	RedisErrors     metric.Int64Counter     // callbus_redis_errors_total
	RecordsRejected metric.Int64Counter     // callbus_records_rejected_total{resource,reason}: API records left out
	PolicyFields    metric.Int64Counter     // callbus_policy_fields_total{field,action}: values the data policy hashed, masked or dropped
	// WatermarkPublished is callbus_watermark_published_timestamp_seconds: the
	// Unix time JetStream acknowledged the account's latest account.watermark.
	WatermarkPublished metric.Float64Gauge
	// WatermarkInterval is callbus_watermark_interval_seconds: the setting
	// watermark_interval_seconds, for the alert's threshold.
	WatermarkInterval metric.Float64Gauge
	meter             metric.Meter
	handler           http.Handler
	provider          *sdkmetric.MeterProvider

	// Set on an account's instruments (Account).
	account string
	attr    metric.MeasurementOption
	regs    *registrations
	shared  *callbacks // the accounts' scrape-time callbacks, the process's
}

// exemplarsWanted reports whether the histograms keep exemplars (an observation
// with the trace it was made in): only when traces are exported (the condition
// of NewTracerProvider), or when OTEL_METRICS_EXEMPLAR_FILTER says so (the SDK
// reads it). Without traces there is nothing to link to, yet every histogram
// series would hold a reservoir, a slot per bucket: per account, resource and
// event type, about 50 KB of each account's heap in a fleet replica.
func exemplarsWanted(getenv func(string) string) bool {
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" ||
		getenv("OTEL_METRICS_EXEMPLAR_FILTER") != ""
}

// NewMetrics creates the process's instruments on a meter provider exporting to
// a fresh Prometheus registry (with Go and process collectors), served by
// Handler. Per-account series are recorded through Account. The provider has no
// cardinality limit: the series grow with the accounts a replica serves (see the
// operations page's note, docs/operations.md), and a limit would fold the accounts past it into
// one overflow series that no dashboard can tell apart.
func NewMetrics() (*Metrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	opts := []sdkmetric.Option{sdkmetric.WithReader(exp), sdkmetric.WithCardinalityLimit(0)}
	if !exemplarsWanted(os.Getenv) {
		opts = append(opts, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	m := &Metrics{meter: mp.Meter("github.com/callbus/callbus"), provider: mp,
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	m.shared = &callbacks{meter: m.meter, kinds: map[string]*callbackKind{}}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var e error
	m.APIRequests, e = m.meter.Int64Counter("callbus.api.requests", metric.WithDescription("Requests to the call-center API, by operation and HTTP status (0: no response)."), metric.WithUnit("{request}"))
	add(e)
	m.RateLimitTotal, e = m.meter.Int64Gauge("callbus.api.rate_limit", metric.WithDescription("The account's API rate limit per window (X-RateLimit-Total)."), metric.WithUnit("{request}"))
	add(e)
	m.RateLimitRemain, e = m.meter.Int64Gauge("callbus.api.rate_limit.remaining", metric.WithDescription("Requests left in the API's current window (X-RateLimit-Remaining)."), metric.WithUnit("{request}"))
	add(e)
	m.Interval, e = m.meter.Float64Gauge("callbus.poll.interval", metric.WithDescription("Effective poll interval per resource, after sharing the rate budget."), metric.WithUnit("s"))
	add(e)
	m.TargetInterval, e = m.meter.Float64Gauge("callbus.poll.target_interval", metric.WithDescription("Configured (target) poll interval per resource, before sharing the rate budget."), metric.WithUnit("s"))
	add(e)
	m.CycleDuration, e = m.meter.Float64Histogram("callbus.poll.cycle.duration", metric.WithDescription("Duration of poll cycles per resource and outcome."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
	add(e)
	m.CycleRequests, e = m.meter.Int64Counter("callbus.poll.requests", metric.WithDescription("API requests spent by poll cycles, per resource."), metric.WithUnit("{request}"))
	add(e)
	m.EventsPublished, e = m.meter.Int64Counter("callbus.events.published", metric.WithDescription("Events acknowledged by JetStream, per type."), metric.WithUnit("{event}"))
	add(e)
	m.DetectionDelay, e = m.meter.Float64Histogram("callbus.detection.delay", metric.WithDescription("Publish time minus the time of the change, where the API gives one, per event type."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600))
	add(e)
	m.TruncatedSize, e = m.meter.Int64Histogram("callbus.events.truncated.size", metric.WithDescription("Original size of the events larger than NATS accepts, published reduced (callbustruncated), per type."), metric.WithUnit("By"),
		metric.WithExplicitBucketBoundaries(64<<10, 256<<10, 1<<20, 2<<20, 4<<20, 16<<20, 64<<20))
	add(e)
	m.Leader, e = m.meter.Int64Gauge("callbus.leader", metric.WithDescription("1 while this replica holds the account's lease and polls, 0 on standby."))
	add(e)
	m.RedisErrors, e = m.meter.Int64Counter("callbus.redis.errors", metric.WithDescription("Failed Redis commands."), metric.WithUnit("{error}"))
	add(e)
	m.RecordsRejected, e = m.meter.Int64Counter("callbus.records.rejected", metric.WithDescription("API records left out of a list page or an export report (undecodable or failing a sanity rule), per resource and reason; each record once."), metric.WithUnit("{record}"))
	add(e)
	m.PolicyFields, e = m.meter.Int64Counter("callbus.policy.fields", metric.WithDescription("Personal values the account's data policy hashed, masked or dropped as records were decoded, per field and action."), metric.WithUnit("{value}"))
	add(e)
	m.WatermarkPublished, e = m.meter.Float64Gauge("callbus.watermark.published_timestamp", metric.WithDescription("Unix time at which JetStream acknowledged the account's latest watermark (account.watermark): it stops moving when the poller or the relay stalls."), metric.WithUnit("s"))
	add(e)
	m.WatermarkInterval, e = m.meter.Float64Gauge("callbus.watermark.interval", metric.WithDescription("The account's watermark interval (watermark_interval_seconds)."), metric.WithUnit("s"))
	add(e)
	if len(errs) > 0 {
		return nil, fmt.Errorf("metrics: %v", errs)
	}
	return m, nil
}

// Handler serves the Prometheus exposition.
func (m *Metrics) Handler() http.Handler { return m.handler }

// Shutdown stops the meter provider.
func (m *Metrics) Shutdown(ctx context.Context) error { return m.provider.Shutdown(ctx) }
