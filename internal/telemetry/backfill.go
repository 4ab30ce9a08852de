package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// BackfillState is a backfill's progress as its gauges show it.
type BackfillState struct {
	Records, Events, Requests int64
	Fraction                  float64 // how far the current phase is, 0 to 1 (-1: unknown)
	// Jobs counts this process's export jobs by outcome (completed, failed,
	// stalled, unreadable).
	Jobs map[string]int64
	// Incomplete is 1 while the account's last backfill gave up (its history
	// incomplete), 0 otherwise, -1 when unknown (left out of the scrape).
	Incomplete int64
}

// ObserveBackfill registers the backfill gauges (callbus_backfill_*), read from
// state at scrape time (with the scrape's context). Call it once per account (on
// Account's instruments: Stop unregisters them).
func (m *Metrics) ObserveBackfill(state func(context.Context) BackfillState) error {
	records, e1 := m.meter.Int64ObservableGauge("callbus.backfill.records", metric.WithDescription("Export report records a backfill committed."), metric.WithUnit("{record}"))
	events, e2 := m.meter.Int64ObservableGauge("callbus.backfill.events", metric.WithDescription("Events a backfill committed."), metric.WithUnit("{event}"))
	requests, e3 := m.meter.Int64ObservableGauge("callbus.backfill.requests", metric.WithDescription("API requests a backfill used."), metric.WithUnit("{request}"))
	done, e4 := m.meter.Float64ObservableGauge("callbus.backfill.phase.progress", metric.WithDescription("How far the backfill's current phase is, 0 to 1 (-1: unknown)."))
	jobs, e5 := m.meter.Int64ObservableCounter("callbus.backfill.jobs", metric.WithDescription("Export jobs of backfills, by outcome: completed, failed (ended in another status), stalled (no progress), unreadable (report not downloaded or read); all but completed are replaced by a new job, a bounded number of times."), metric.WithUnit("{job}"))
	incomplete, e6 := m.meter.Int64ObservableGauge("callbus.backfill.incomplete", metric.WithDescription("1 while the account's last backfill gave up after its export jobs failed: its history is incomplete and paged reads took over; 0 otherwise."))
	if err := errors.Join(e1, e2, e3, e4, e5, e6); err != nil {
		return err
	}
	opts := m.observeOpts()
	return m.register("backfill", func(ctx context.Context, o metric.Observer) error {
		s := state(ctx)
		o.ObserveInt64(records, s.Records, opts...)
		o.ObserveInt64(events, s.Events, opts...)
		o.ObserveInt64(requests, s.Requests, opts...)
		o.ObserveFloat64(done, s.Fraction, opts...)
		for outcome, n := range s.Jobs {
			o.ObserveInt64(jobs, n, append([]metric.ObserveOption{metric.WithAttributes(attribute.String("outcome", outcome))}, opts...)...)
		}
		if s.Incomplete >= 0 {
			o.ObserveInt64(incomplete, s.Incomplete, opts...)
		}
		return nil
	}, records, events, requests, done, jobs, incomplete)
}
