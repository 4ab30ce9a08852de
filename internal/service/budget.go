package service

import (
	"context"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// observeBudget exports, read at scrape time, the configured share of the
// account's rate limit (callbus_rate_budget_share_ratio) and the budget it gives in
// requests per window (callbus_rate_budget_requests, once the limit is known), so
// that the dashboard and the alerts compare the requests made with them.
func observeBudget(m *telemetry.Metrics, lim *callcenter.Limiter, share float64) error {
	if share == 0 {
		share = callcenter.DefaultShare
	}
	meter := m.Meter()
	shareG, err := meter.Float64ObservableGauge("callbus.rate_budget.share", metric.WithDescription("Configured share of the account's API rate limit callbus may use (0 to 1)."), metric.WithUnit("1"))
	if err != nil {
		return err
	}
	budget, err := meter.Int64ObservableGauge("callbus.rate_budget.requests", metric.WithDescription("Requests per rate window callbus may make: its share of the account's limit."), metric.WithUnit("{request}"))
	if err != nil {
		return err
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveFloat64(shareG, share)
		if st := lim.Stats(); st.Budget > 0 {
			o.ObserveInt64(budget, int64(st.Budget))
		}
		return nil
	}, shareG, budget)
	return err
}

// recordTargets records each polled resource's configured interval next to the
// effective one, and shows callbus_records_rejected_total at zero for each from the
// start (a counter that appears with its first rejection hides the first increase
// from rate()).
func recordTargets(m *telemetry.Metrics, targets map[string]time.Duration) {
	ctx := context.Background() // instruments take a context for exemplars only
	for res, d := range targets {
		attrs := metric.WithAttributes(attribute.String("resource", res))
		m.TargetInterval.Record(ctx, d.Seconds(), attrs)
		m.RecordsRejected.Add(ctx, 0, attrs)
	}
}
