package service

import (
	"context"
	"time"

	"github.com/callbus/callbus/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// recordTargets records each polled resource's configured interval next to the
// effective one, and shows callbus_records_rejected_total at zero for each from the
// start (a counter that appears with its first rejection hides the first increase
// from rate()).
func recordTargets(ctx context.Context, m *telemetry.Metrics, targets map[string]time.Duration) {
	for res, d := range targets {
		attrs := metric.WithAttributes(attribute.String("resource", res))
		m.TargetInterval.Record(ctx, d.Seconds(), attrs)
		m.RecordsRejected.Add(ctx, 0, attrs)
	}
}
