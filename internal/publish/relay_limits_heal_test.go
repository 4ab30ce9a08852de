package publish

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// publishStopped commits n events and has a relay publish them, then stops it.
func publishStopped(t *testing.T, b *bed, n int) {
	t.Helper()
	r := b.relay()
	stop := runStoppable(t, r)
	defer stop()
	b.commit(t, n)
	r.Wake()
	simtest.WaitFor(t, 20*time.Second, "the events published", func() bool { return b.outboxLen(t) == 0 })
}

// Events the stream dropped by its own limits (max_msgs here; max_bytes and
// max_msgs_per_subject the same) were not lost: a relay starting a term does
// not publish them again, though the outbox's retention still holds them.
func TestRelayDoesNotHealWhatTheStreamsLimitsRemoved(t *testing.T) {
	b := newBed(t, false)
	b.updateStream(t, func(c *jetstream.StreamConfig) { c.MaxMsgs = 5 })
	publishStopped(t, b, 20)
	r2 := b.relay()
	if err := r2.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if h := r2.Stats.Healed.Load(); h != 0 {
		t.Errorf("healed %d events the stream's max_msgs removed, want 0", h)
	}
	msgs := streamMsgs(t, b.stream)
	if len(msgs) != 5 {
		t.Fatalf("stream holds %d messages, want the 5 its limit keeps", len(msgs))
	}
	for i, m := range msgs {
		if got, want := m.Header.Get(HeaderOutboxID), b.ids[15+i]; got != want {
			t.Errorf("message %d: outbox id %s, want %s (the last 5 published, once)", i, got, want)
		}
	}
}

// A stream that came back empty (its store lost whole) and took publishes of
// the reconnect buffer before the relay looked begins after the lost events,
// yet lost them: they are healed, its limits removed nothing.
func TestRelayHealsAStreamThatCameBackEmpty(t *testing.T) {
	b := newBed(t, false)
	copied := b.nats.CopyStore(t) // the stream, empty
	publishStopped(t, b, 20)
	b.nats.RestoreStore(t, copied)
	b.commit(t, 5)
	b.publishDirect(t, b.records(t)...) // 20..24, stored first
	r2 := b.relay()
	if err := r2.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, streamMsgs(t, b.stream), 25)
	if h := r2.Stats.Healed.Load(); h != 20 {
		t.Errorf("healed %d, want the 20 lost", h)
	}
}
