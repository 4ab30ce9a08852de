package telemetry

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

func TestMetricsExposition(t *testing.T) {
	m, err := NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) }) // t.Context() is done by now
	m.APIRequests.Add(t.Context(), 2, metric.WithAttributes(attribute.String("operation", "list_calls"), attribute.Int("status", 200)))
	m.Leader.Record(t.Context(), 1)
	body := expose(t, m)
	for _, want := range []string{
		`callbus_api_requests_total{operation="list_calls",status="200"} 2`,
		"callbus_leader 1",
		"callbus_redis_errors_total 0", // shown before the first error
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// WithAccount puts the account on every callbus series (not on Go's), and the
// instruments the dashboard and alerts read are declared under their names.
func TestMetricsAccountLabel(t *testing.T) {
	m, err := NewMetrics(WithAccount("acme"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	res := metric.WithAttributes(attribute.String("resource", "calls"))
	m.TargetInterval.Record(t.Context(), 5, res)
	m.RecordsRejected.Add(t.Context(), 1, metric.WithAttributes(attribute.String("resource", "calls"), attribute.String("reason", "undecodable")))
	m.Leader.Record(t.Context(), 1)
	body := expose(t, m)
	for _, want := range []string{
		`callbus_poll_target_interval_seconds{account="acme",resource="calls"} 5`,
		`callbus_records_rejected_total{account="acme",reason="undecodable",resource="calls"} 1`,
		`callbus_leader{account="acme"} 1`,
		`callbus_redis_errors_total{account="acme"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, `go_goroutines{account`) {
		t.Error("Go metrics carry the account label")
	}
}
