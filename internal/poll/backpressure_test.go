package poll

import (
	"github.com/callbus/callbus/internal/testkit/simtest"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// With nobody publishing (NATS away), polling pauses once the outbox reaches
// OutboxMax and says why; it resumes when the relay has made room.
func TestPollingPausesAtOutboxLimit(t *testing.T) {
	p, store, s := newPollerOf(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 40}, everything)
	p.cfg.OutboxMax = 20
	done := make(chan error, 1)
	go func() { done <- p.Run(t.Context(), p.lease) }()
	simtest.WaitFor(t, 30*time.Second, "polling to pause", func() bool { return p.Paused() != "" })
	full, err := store.OutboxLen(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Advance(10 * time.Minute) // changes happen meanwhile: they are read later, not queued
	recs, err := store.ReadOutbox(t.Context(), "", int(full))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := store.OutboxLen(t.Context()); n != full {
		t.Fatalf("paused, the outbox grew from %d to %d", full, n)
	}
	if err := store.TrimOutbox(t.Context(), recs[len(recs)-1].StreamID); err != nil { // the relay's work
		t.Fatal(err)
	}
	simtest.WaitFor(t, 30*time.Second, "polling to resume and queue again", func() bool {
		n, _ := store.OutboxLen(t.Context())
		return n > 0
	})
	select {
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	default:
	}
}
