package service

import (
	"context"

	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/telemetry"
	"go.opentelemetry.io/otel/metric"
)

// observePaused registers callbus_poll_paused: 1 while polling waits for the
// outbox to drain below outbox_max_events (poll.Poller.Paused), 0 otherwise.
func observePaused(m *telemetry.Metrics, p *poll.Poller) error {
	g, err := m.Meter().Int64ObservableGauge("callbus.poll.paused",
		metric.WithDescription("1 while polling is paused because the outbox reached outbox_max_events (JetStream not taking events), 0 otherwise."))
	if err != nil {
		return err
	}
	_, err = m.Meter().RegisterCallback(func(_ context.Context, o metric.Observer) error {
		v := int64(0)
		if p.Paused() != "" {
			v = 1
		}
		o.ObserveInt64(g, v)
		return nil
	}, g)
	return err
}
