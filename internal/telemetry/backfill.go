package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// BackfillState is a backfill's progress as its gauges show it.
type BackfillState struct {
	Records, Events, Requests int64
	Fraction                  float64 // how far the current phase is, 0 to 1 (-1: unknown)
}

// ObserveBackfill registers the backfill gauges (callbus_backfill_*), read from
// state at scrape time. Call it once per account (on Account's instruments: Stop unregisters them).
func (m *Metrics) ObserveBackfill(state func() BackfillState) error {
	records, e1 := m.meter.Int64ObservableGauge("callbus.backfill.records", metric.WithDescription("Export report records a backfill committed."), metric.WithUnit("{record}"))
	events, e2 := m.meter.Int64ObservableGauge("callbus.backfill.events", metric.WithDescription("Events a backfill committed."), metric.WithUnit("{event}"))
	requests, e3 := m.meter.Int64ObservableGauge("callbus.backfill.requests", metric.WithDescription("API requests a backfill used."), metric.WithUnit("{request}"))
	done, e4 := m.meter.Float64ObservableGauge("callbus.backfill.phase.progress", metric.WithDescription("How far the backfill's current phase is, 0 to 1 (-1: unknown)."))
	if err := errors.Join(e1, e2, e3, e4); err != nil {
		return err
	}
	opts := m.observeOpts()
	return m.register(func(_ context.Context, o metric.Observer) error {
		s := state()
		o.ObserveInt64(records, s.Records, opts...)
		o.ObserveInt64(events, s.Events, opts...)
		o.ObserveInt64(requests, s.Requests, opts...)
		o.ObserveFloat64(done, s.Fraction, opts...)
		return nil
	}, records, events, requests, done)
}
