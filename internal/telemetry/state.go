package telemetry

import (
	"context"
	"errors"
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
// share of the rate budget used, the relay's publish errors, and the budget's
// share and size. Call it once per account (on Account's instruments: Stop
// unregisters them).
func (m *Metrics) ObserveState(s State) error {
	g, err := m.stateGauges()
	if err != nil {
		return err
	}
	opts := m.observeOpts()
	return m.register("state", func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		g.observe(ctx, o, s, opts)
		return nil
	}, g.depth, g.lag, g.used, g.pubErrs, g.share, g.budget)
}

// stateGauges are the instruments ObserveState reads into.
type stateGauges struct {
	depth, budget, pubErrs metric.Int64Observable
	lag, used, share       metric.Float64Observable
}

func (m *Metrics) stateGauges() (g stateGauges, err error) {
	var errs [6]error
	g.depth, errs[0] = m.meter.Int64ObservableGauge("callbus.outbox.depth", metric.WithDescription("Events committed and not yet acknowledged by JetStream."), metric.WithUnit("{event}"))
	g.lag, errs[1] = m.meter.Float64ObservableGauge("callbus.relay.lag", metric.WithDescription("Age of the oldest event waiting in the outbox (0 when empty)."), metric.WithUnit("s"))
	g.used, errs[2] = m.meter.Float64ObservableGauge("callbus.rate_budget.used", metric.WithDescription("Share of this service's rate budget used in the current window (0 to 1)."), metric.WithUnit("1"))
	g.pubErrs, errs[3] = m.meter.Int64ObservableCounter("callbus.publish.errors", metric.WithDescription("Failed publishes or outbox reads of the relay (each retried)."), metric.WithUnit("{error}"))
	g.share, errs[4] = m.meter.Float64ObservableGauge("callbus.rate_budget.share", metric.WithDescription("Configured share of the account's API rate limit callbus may use (0 to 1)."), metric.WithUnit("1"))
	g.budget, errs[5] = m.meter.Int64ObservableGauge("callbus.rate_budget.requests", metric.WithDescription("Requests per rate window callbus may make: its share of the account's limit."), metric.WithUnit("{request}"))
	return g, errors.Join(errs[:]...)
}

// observe reads s into the gauges; a source that fails is left out of this
// scrape.
func (g stateGauges) observe(ctx context.Context, o metric.Observer, s State, opts []metric.ObserveOption) {
	if s.OutboxDepth != nil {
		if n, err := s.OutboxDepth(ctx); err == nil {
			o.ObserveInt64(g.depth, n, opts...)
		}
	}
	if s.OutboxOldest != nil {
		if oldest, ok, err := s.OutboxOldest(ctx); err == nil {
			age := 0.0
			if ok {
				age = time.Since(oldest).Seconds()
			}
			o.ObserveFloat64(g.lag, age, opts...)
		}
	}
	if s.BudgetUsed != nil {
		if share, ok := s.BudgetUsed(); ok {
			o.ObserveFloat64(g.used, share, opts...)
		}
	}
	if s.PublishErrors != nil {
		o.ObserveInt64(g.pubErrs, s.PublishErrors(), opts...)
	}
	if s.Share > 0 {
		o.ObserveFloat64(g.share, s.Share, opts...)
	}
	if s.Budget != nil {
		if n, ok := s.Budget(); ok {
			o.ObserveInt64(g.budget, n, opts...)
		}
	}
}

// SetLeader records this replica's role in callbus_leader (the account's, on
// Account's instruments).
func (m *Metrics) SetLeader(ctx context.Context, leader bool) {
	v := int64(0)
	if leader {
		v = 1
	}
	m.Leader.Record(ctx, v)
}
