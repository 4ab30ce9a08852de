package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// State tells the gauges read at scrape time where to read. A nil func leaves
// its gauge out; one that fails leaves it out of that scrape only. The funcs get
// the scrape's context, bounded to one second.
type State struct {
	OutboxDepth   func(ctx context.Context) (int64, error)           // callbus_outbox_depth
	OutboxOldest  func(ctx context.Context) (time.Time, bool, error) // callbus_relay_lag_seconds (0 when empty)
	BudgetUsed    func() (share float64, known bool)                 // callbus_rate_budget_used_ratio
	PublishErrors func() int64                                       // callbus_publish_errors_total
	// Share is the configured share of the account's limit
	// (callbus_rate_budget_share_ratio; 0 leaves it out) and Budget the requests
	// per window it gives once the limit is known (callbus_rate_budget_requests):
	// the dashboard and the alerts compare the requests made with them.
	Share  float64
	Budget func() (requests int64, known bool)
}

// ObserveState registers the scrape-time gauges: outbox depth and relay lag, the
// share of the rate budget used, and the relay's publish errors. Call it once.
func (m *Metrics) ObserveState(s State) error {
	depth, err := m.meter.Int64ObservableGauge("callbus.outbox.depth", metric.WithDescription("Events committed and not yet acknowledged by JetStream."), metric.WithUnit("{event}"))
	if err != nil {
		return err
	}
	lag, err := m.meter.Float64ObservableGauge("callbus.relay.lag", metric.WithDescription("Age of the oldest event waiting in the outbox (0 when empty)."), metric.WithUnit("s"))
	if err != nil {
		return err
	}
	used, err := m.meter.Float64ObservableGauge("callbus.rate_budget.used", metric.WithDescription("Share of this service's rate budget used in the current window (0 to 1)."), metric.WithUnit("1"))
	if err != nil {
		return err
	}
	pubErrs, err := m.meter.Int64ObservableCounter("callbus.publish.errors", metric.WithDescription("Failed publishes or outbox reads of the relay (each retried)."), metric.WithUnit("{error}"))
	if err != nil {
		return err
	}
	shareG, err := m.meter.Float64ObservableGauge("callbus.rate_budget.share", metric.WithDescription("Configured share of the account's API rate limit callbus may use (0 to 1)."), metric.WithUnit("1"))
	if err != nil {
		return err
	}
	budget, err := m.meter.Int64ObservableGauge("callbus.rate_budget.requests", metric.WithDescription("Requests per rate window callbus may make: its share of the account's limit."), metric.WithUnit("{request}"))
	if err != nil {
		return err
	}
	_, err = m.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if s.OutboxDepth != nil {
			if n, err := s.OutboxDepth(ctx); err == nil {
				o.ObserveInt64(depth, n)
			}
		}
		if s.OutboxOldest != nil {
			if oldest, ok, err := s.OutboxOldest(ctx); err == nil {
				age := 0.0
				if ok {
					age = time.Since(oldest).Seconds()
				}
				o.ObserveFloat64(lag, age)
			}
		}
		if s.BudgetUsed != nil {
			if share, ok := s.BudgetUsed(); ok {
				o.ObserveFloat64(used, share)
			}
		}
		if s.PublishErrors != nil {
			o.ObserveInt64(pubErrs, s.PublishErrors())
		}
		if s.Share > 0 {
			o.ObserveFloat64(shareG, s.Share)
		}
		if s.Budget != nil {
			if n, ok := s.Budget(); ok {
				o.ObserveInt64(budget, n)
			}
		}
		return nil
	}, depth, lag, used, pubErrs, shareG, budget)
	return err
}

// SetLeader records this replica's role in callbus_leader.
func (m *Metrics) SetLeader(ctx context.Context, leader bool) {
	v := int64(0)
	if leader {
		v = 1
	}
	m.Leader.Record(ctx, v)
}
