package telemetry

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

func TestMetricsExposition(t *testing.T) {
	m := testMetrics(t)
	m.APIRequests.Add(t.Context(), 2, metric.WithAttributes(attribute.String("operation", "list_calls"), attribute.Int("status", 200)))
	m.Leader.Record(t.Context(), 1)
	body := expose(t, m)
	for _, want := range []string{
		`callbus_api_requests_total{operation="list_calls",status="200"} 2`,
		"callbus_leader 1",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// Account puts the account on every series it records (not on Go's), one
// provider serving several accounts; a caller's account attribute cannot replace
// it; the instruments the dashboard and alerts read are declared under their
// names.
func TestMetricsAccountLabel(t *testing.T) {
	root := testMetrics(t)
	m, other := root.Account("acme"), root.Account("globex")
	other.Leader.Record(t.Context(), 0)
	other.CycleRequests.Add(t.Context(), 3, metric.WithAttributes(attribute.String("resource", "calls"), attribute.String(AccountLabel, "acme")))
	res := metric.WithAttributes(attribute.String("resource", "calls"))
	m.TargetInterval.Record(t.Context(), 5, res)
	m.RecordsRejected.Add(t.Context(), 1, metric.WithAttributes(attribute.String("resource", "calls"), attribute.String("reason", "undecodable")))
	m.Leader.Record(t.Context(), 1)
	m.Interval.Record(t.Context(), 7, res)
	m.RateLimitRemain.Record(t.Context(), 42)
	m.CycleDuration.Record(t.Context(), 0.2, res)
	m.TruncatedSize.Record(t.Context(), 100<<10)
	body := expose(t, m)
	for _, want := range []string{
		`callbus_poll_target_interval_seconds{account="acme",resource="calls"} 5`,
		`callbus_poll_interval_seconds{account="acme",resource="calls"} 7`,
		`callbus_api_rate_limit_remaining{account="acme"} 42`,
		`callbus_poll_cycle_duration_seconds_count{account="acme",resource="calls"} 1`,
		`callbus_events_truncated_size_bytes_count{account="acme"} 1`,
		`callbus_records_rejected_total{account="acme",reason="undecodable",resource="calls"} 1`,
		`callbus_leader{account="acme"} 1`,
		`callbus_redis_errors_total{account="acme"} 0`, // shown before the first error
		`callbus_leader{account="globex"} 0`,
		`callbus_poll_requests_total{account="globex",resource="calls"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, `go_goroutines{account`) {
		t.Error("Go metrics carry the account label")
	}
}

// Attributes' option records its attributes with the account's label, which a
// caller's account attribute cannot replace; on another account's instruments
// that account's label wins; on the process's it adds none.
func TestMetricsAttributes(t *testing.T) {
	root := testMetrics(t)
	acme, globex := root.Account("acme"), root.Account("globex")
	created := acme.Attributes(attribute.String("type", "call.created"), attribute.String(AccountLabel, "globex"))
	acme.EventsPublished.Add(t.Context(), 2, created)
	acme.EventsPublished.Add(t.Context(), 1, created)
	acme.DetectionDelay.Record(t.Context(), 0.7, created)
	globex.EventsPublished.Add(t.Context(), 5, created)
	root.EventsPublished.Add(t.Context(), 7, root.Attributes(attribute.String("type", "call.ended")))
	body := expose(t, root)
	for _, want := range []string{
		`callbus_events_published_total{account="acme",type="call.created"} 3`,
		`callbus_detection_delay_seconds_count{account="acme",type="call.created"} 1`,
		`callbus_events_published_total{account="globex",type="call.created"} 5`,
		`callbus_events_published_total{type="call.ended"} 7`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}
