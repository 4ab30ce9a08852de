package publish

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go/jetstream"
)

// gapBed commits 10 events and stores 0..4, then 6 and 7 in the stream, as
// an earlier relay would have whose publish of 5 failed (lost at a stream
// leader change) while 6 and 7 were in flight; the duplicate window is long.
func gapBed(t *testing.T) (*bed, []event.Committed) {
	t.Helper()
	b := newBed(t, false)
	b.updateStream(t, func(c *jetstream.StreamConfig) { c.Duplicates = 10 * time.Minute })
	b.commit(t, 10)
	recs := b.records(t)
	b.publishDirect(t, recs[:5]...)
	b.publishDirect(t, recs[6:8]...)
	return b, recs
}

// A relay that published a withdrawn entry again under its derived message id,
// and the entry after it, and died before their acknowledgements arrived (both
// stored): the next relay finds them in the stream by their outbox ids, whatever
// their message ids, and neither withdraws them nor stores them twice.
func TestRelayFindsAResendWhoseAckWasLost(t *testing.T) {
	b, recs := gapBed(t)
	first := b.relay()
	if err := first.reconcile(t.Context()); err != nil { // withdraws 6 and 7 (counted once each)
		t.Fatal(err)
	}
	// The first relay then published 5, and 6 under evt-6~r1, and died unacknowledged.
	b.publishDirect(t, recs[5])
	msg, _ := new(outMsg).fill(recs[6], "CALLCENTER", event.MsgID(recs[6].ID, 1))
	if _, err := b.js.PublishMsg(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	next := b.relay()
	if err := next.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	msgs := streamMsgs(t, b.stream)
	checkInOrder(t, msgs, 10)
	if got := msgs[6].Header.Get(jetstream.MsgIDHeader); got != "evt-6~r1" {
		t.Errorf("message 6: Nats-Msg-Id %q, want the resend's evt-6~r1 kept", got)
	}
	if w, d := next.Stats.Withdrawn.Load(), next.Stats.Skipped.Load(); w != 0 || d != 2 {
		t.Errorf("the next relay withdrew %d and skipped %d, want 0 and the 2 the first relay left (5, 6)", w, d)
	}
}
