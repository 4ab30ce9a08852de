package publish

import (
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The incident: one call of 2,500 participants (1.3 MB) over the server's
// max_payload (1 MB) blocked the outbox. (The example's participants are
// smaller: 3,500 of them make 1.3 MB.) It is now published reduced, in its
// place, and the events after it follow.
func TestRelayPublishesAnEventOverMaxPayloadReduced(t *testing.T) {
	b := newBed(t, false)
	big := bigCall(t, 3500)
	maxPayload := b.js.Conn().MaxPayload()
	if int64(len(big)) <= maxPayload {
		t.Fatalf("the call is %d bytes, not over the server's max_payload %d", len(big), maxPayload)
	}
	b.commitBodies(t, []byte(`{"n":0}`), big, []byte(`{"n":2}`))
	var original int
	r := b.relay(WithMaxPayload(b.js.Conn().MaxPayload), WithTruncationObserver(func(_ event.Committed, size int) { original = size }))
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	msgs := streamMsgs(t, b.stream)
	checkInOrder(t, msgs, 3)
	checkReduced(t, msgs[1].Data, int(maxPayload), 3500)
	if original != len(big) || r.Stats.Truncated.Load() != 1 {
		t.Fatalf("OnTruncated saw %d bytes, %d truncated; want %d, 1", original, r.Stats.Truncated.Load(), len(big))
	}
	if n := b.outboxLen(t); n != 0 {
		t.Fatalf("outbox holds %d after the drain, want 0", n)
	}
}

// A real fault mid-batch: the operator lowers the stream's max_msg_size while the
// relay runs, so the server rejects one event of a batch and stores the ones
// after it. The relay withdraws those, publishes the rejected one reduced to the
// new limit, then the others again: the stream ends in outbox order, each once.
func TestRelayKeepsOrderWhenTheStreamRejectsOneMidBatch(t *testing.T) {
	b := newBed(t, false)
	b.updateStream(t, func(c *jetstream.StreamConfig) { c.Duplicates = 500 * time.Millisecond })
	r := b.relay(WithMaxPayload(b.js.Conn().MaxPayload))
	run(t, r) // reconciles: the stream takes any size up to max_payload
	// Once an entry is through, the relay has reconciled: the limit below is news to it.
	b.commit(t, 1)
	r.Wake()
	simtest.WaitFor(t, 20*time.Second, "the first entry published", func() bool { return b.outboxLen(t) == 0 })
	const limit = 16 << 10
	b.updateStream(t, func(c *jetstream.StreamConfig) { c.MaxMsgSize = limit })
	bodies := make([][]byte, 10)
	for i := range bodies {
		bodies[i] = []byte(`{"n":1}`)
	}
	bodies[3] = bigCall(t, 100) // ~45 KB
	b.commitBodies(t, bodies...)
	r.Wake()
	simtest.WaitFor(t, 20*time.Second, "outbox drained", func() bool { return b.outboxLen(t) == 0 })
	msgs := streamMsgs(t, b.stream)
	checkInOrder(t, msgs, 11)
	checkReduced(t, msgs[4].Data, limit, 100)
	if r.Stats.Withdrawn.Load() == 0 || r.Stats.Errors.Load() == 0 {
		t.Fatalf("withdrew %d after %d errors: the fault did not happen as planned", r.Stats.Withdrawn.Load(), r.Stats.Errors.Load())
	}
	t.Logf("withdrew %d, errors %d", r.Stats.Withdrawn.Load(), r.Stats.Errors.Load())
}
