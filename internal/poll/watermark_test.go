package poll

import (
	"reflect"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// Paused on the outbox bound (NATS away), the poller still commits a watermark
// every interval, saying paused and why, its marks standing still; the outbox
// grows by the watermarks alone.
func TestWatermarksWhilePaused(t *testing.T) {
	p, store, _ := newPollerOf(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 40}, everything)
	p.cfg.OutboxMax, p.cfg.WatermarkInterval = 20, 100*time.Millisecond
	done := make(chan error, 1)
	go func() { done <- p.Run(t.Context(), p.lease) }()
	simtest.WaitFor(t, 30*time.Second, "polling to pause", func() bool { return p.Paused() != "" })
	var paused []events.WatermarkData
	simtest.WaitFor(t, 30*time.Second, "three watermarks while paused", func() bool {
		paused = pausedWatermarks(t, store)
		return len(paused) >= 3
	})
	for _, d := range paused {
		if d.Reason == "" || len(d.Resources) == 0 || !reflect.DeepEqual(d.Resources, paused[0].Resources) {
			t.Errorf("paused watermark %+v, want a reason and the marks of %+v", d, paused[0].Resources)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	default:
	}
}

// pausedWatermarks decodes the outbox's watermarks saying paused.
func pausedWatermarks(t *testing.T, store *cursor.Store) []events.WatermarkData {
	t.Helper()
	recs, err := store.ReadOutbox(t.Context(), "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.WatermarkData
	for _, r := range recs {
		if r.Type != events.AccountWatermark {
			continue
		}
		ev, err := events.Decode(r.Data)
		if err != nil {
			t.Fatal(err)
		}
		if d := ev.(*events.AccountWatermarkEvent).Data; d.State == events.StatePaused {
			out = append(out, d)
		}
	}
	return out
}

// The state of a watermark: budget_starved names the resources the budget
// keeps above their targets.
func TestWatermarkStarved(t *testing.T) {
	p, _, _ := newPollerOf(t, sim.Config{Agents: 2}, map[string]time.Duration{ResCalls: time.Second, ResUsers: time.Second})
	p.effective = map[string]time.Duration{ResCalls: 3 * time.Second, ResUsers: time.Second}
	p.readDone(ResUsers, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	p.cfg.WatermarkInterval = 30 * time.Second
	d := p.watermarkData()
	want := events.WatermarkData{IntervalSeconds: 30, State: events.StateBudgetStarved, Reason: "rate budget short: calls every 3s (target 1s)",
		Resources: []events.ResourceMark{{Resource: ResUsers, Until: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
}
