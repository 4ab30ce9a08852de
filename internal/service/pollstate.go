package service

import (
	"context"

	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/telemetry"
	"go.opentelemetry.io/otel/metric"
)

// observePoller registers callbus_poll_paused (1 while polling waits for the
// outbox to drain below outbox_max_events, see poll.Poller.Paused) and
// callbus_state_rollbacks (leader terms that found Redis behind the stream and
// rebuilt the state from it, see poll.Poller.Rollbacks).
func observePoller(m *telemetry.Metrics, p *poll.Poller) error {
	paused, err := m.Meter().Int64ObservableGauge("callbus.poll.paused",
		metric.WithDescription("1 while polling is paused because the outbox reached outbox_max_events (JetStream not taking events), 0 otherwise."))
	if err != nil {
		return err
	}
	rollbacks, err := m.Meter().Int64ObservableCounter("callbus.state.rollbacks",
		metric.WithDescription("Leader terms that found Redis behind the stream (rolled back or emptied) and rebuilt the state from the stream."))
	if err != nil {
		return err
	}
	_, err = m.Meter().RegisterCallback(func(_ context.Context, o metric.Observer) error {
		v := int64(0)
		if p.Paused() != "" {
			v = 1
		}
		o.ObserveInt64(paused, v)
		o.ObserveInt64(rollbacks, p.Rollbacks())
		return nil
	}, paused, rollbacks)
	return err
}
