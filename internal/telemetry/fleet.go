package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
)

// FleetState tells the fleet's gauges where to read; a nil func leaves its gauge
// out.
type FleetState struct {
	Members func() int64 // callbus_fleet_members: live replicas of the fleet
	Owned   func() int64 // callbus_fleet_accounts_owned: accounts this replica serves
	Listed  func() int64 // callbus_fleet_accounts: accounts the source lists
	Refused func() int64 // callbus_fleet_accounts_refused: account files refused
	// Draining: callbus_fleet_accounts_draining, the accounts no longer
	// configured whose outbox this replica publishes now.
	Draining func() int64
}

// ObserveFleet registers the fleet's gauges (process-wide, no account label),
// read at scrape time. Call it once.
func (m *Metrics) ObserveFleet(s FleetState) error {
	members, e1 := m.meter.Int64ObservableGauge("callbus.fleet.members", metric.WithDescription("Live replicas of the fleet, as this replica last read them."), metric.WithUnit("{replica}"))
	owned, e2 := m.meter.Int64ObservableGauge("callbus.fleet.accounts.owned", metric.WithDescription("Accounts this replica serves (leads or waits to lead)."), metric.WithUnit("{account}"))
	listed, e3 := m.meter.Int64ObservableGauge("callbus.fleet.accounts", metric.WithDescription("Accounts the accounts source lists (good files)."), metric.WithUnit("{account}"))
	refused, e4 := m.meter.Int64ObservableGauge("callbus.fleet.accounts.refused", metric.WithDescription("Account files refused (see /status and the log for the file and key)."), metric.WithUnit("{file}"))
	draining, e5 := m.meter.Int64ObservableGauge("callbus.fleet.accounts.draining", metric.WithDescription("Accounts no longer configured whose outbox this replica publishes now (see /status)."), metric.WithUnit("{account}"))
	if err := errors.Join(e1, e2, e3, e4, e5); err != nil {
		return err
	}
	observe := func(o metric.Observer, g metric.Int64Observable, f func() int64) {
		if f != nil {
			o.ObserveInt64(g, f())
		}
	}
	return m.register("fleet", func(_ context.Context, o metric.Observer) error {
		observe(o, members, s.Members)
		observe(o, owned, s.Owned)
		observe(o, listed, s.Listed)
		observe(o, refused, s.Refused)
		observe(o, draining, s.Draining)
		return nil
	}, members, owned, listed, refused, draining)
}
