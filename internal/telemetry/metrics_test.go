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
