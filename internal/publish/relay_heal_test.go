package publish

import (
	"context"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
)

// healBed has a relay publish 20 events, copies the JetStream store, has it
// publish 20 more and puts the copy back: the stream lost 20 events it had
// acknowledged (and the relay trimmed), as after a power loss of a server that
// had not synced them yet. r is running throughout when given, else stopped
// before the loss.
func healBed(t *testing.T, b *bed, r *Relay) {
	t.Helper()
	if r == nil {
		r = b.relay()
		stop := runStoppable(t, r)
		defer stop()
	} else {
		run(t, r)
	}
	b.commit(t, 20)
	r.Wake()
	simtest.WaitFor(t, 20*time.Second, "the first 20 published", func() bool { return b.outboxLen(t) == 0 })
	copied := b.nats.CopyStore(t)
	b.commit(t, 20)
	r.Wake()
	simtest.WaitFor(t, 20*time.Second, "20 more published", func() bool { return b.outboxLen(t) == 0 && len(streamMsgs(t, b.stream)) == 40 })
	b.nats.RestoreStore(t, copied)
}

// runStoppable runs r until the returned func is called (or the test ends).
func runStoppable(t *testing.T, r *Relay) func() {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// A running relay notices that the NATS connection came back, finds the
// acknowledged events the restored stream lacks in the outbox's retention and
// publishes them again, in order, before anything newer.
func TestRelayHealsAStreamRestoredUnderIt(t *testing.T) {
	b := newBed(t, false)
	r := b.relay(WithReconnects(func() uint64 { return b.nc.Stats().Reconnects }))
	healBed(t, b, r)
	simtest.WaitFor(t, 30*time.Second, "the lost 20 published again", func() bool { return len(streamMsgs(t, b.stream)) == 40 })
	b.commit(t, 10)
	r.Wake()
	simtest.WaitFor(t, 20*time.Second, "10 more published", func() bool { return b.outboxLen(t) == 0 && len(streamMsgs(t, b.stream)) == 50 })
	checkInOrder(t, streamMsgs(t, b.stream), 50)
	if got := r.Stats.Healed.Load(); got != 20 {
		t.Errorf("healed %d, want the 20 lost", got)
	}
}

// A relay that starts (a leader term's start) after the loss heals the stream
// the same way, from the retention another process's relay left in Redis.
func TestRelayHealsAtStart(t *testing.T) {
	b := newBed(t, false)
	healBed(t, b, nil)
	r := b.relay()
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, streamMsgs(t, b.stream), 40)
	if got := r.Stats.Healed.Load(); got != 20 {
		t.Errorf("healed %d, want the 20 lost", got)
	}
}

// Publishes that reach the restored server before the relay looks (the client's
// reconnect buffer flushing them) are stored ahead of the lost events: they are
// withdrawn and published again after them, so the stream keeps outbox order.
func TestRelayHealsBeforeWhatWasStoredAheadOfTheLoss(t *testing.T) {
	b := newBed(t, false)
	healBed(t, b, nil)
	b.commit(t, 5)
	b.publishDirect(t, b.records(t)...) // 40..44, stored right after 0..19
	r := b.relay()
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, streamMsgs(t, b.stream), 45)
	if h, w := r.Stats.Healed.Load(), r.Stats.Withdrawn.Load(); h != 20 || w != 5 {
		t.Errorf("healed %d and withdrew %d, want the 20 lost and the 5 stored ahead of them", h, w)
	}
}
