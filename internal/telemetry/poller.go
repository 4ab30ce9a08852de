package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// ObservePoller registers callbus_poll_paused (1 while paused() names a reason:
// polling waits for the outbox to drain below outbox_max_events) and
// callbus_state_rollbacks (rollbacks(): leader terms that found Redis behind the
// stream and rebuilt the state from it), read at scrape time. Call it once per account (on Account's instruments: Stop unregisters them).
func (m *Metrics) ObservePoller(paused func() string, rollbacks func() int64) error {
	pausedG, e1 := m.meter.Int64ObservableGauge("callbus.poll.paused",
		metric.WithDescription("1 while polling is paused because the outbox reached outbox_max_events (JetStream not taking events), 0 otherwise."))
	rollbacksC, e2 := m.meter.Int64ObservableCounter("callbus.state.rollbacks",
		metric.WithDescription("Leader terms that found Redis behind the stream (rolled back or emptied) and rebuilt the state from the stream."))
	if err := errors.Join(e1, e2); err != nil {
		return err
	}
	opts := m.observeOpts()
	return m.register("poller", func(_ context.Context, o metric.Observer) error {
		v := int64(0)
		if paused() != "" {
			v = 1
		}
		o.ObserveInt64(pausedG, v, opts...)
		o.ObserveInt64(rollbacksC, rollbacks(), opts...)
		return nil
	}, pausedG, rollbacksC)
}
