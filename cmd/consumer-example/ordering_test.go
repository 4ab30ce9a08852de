package main

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// The stream's order, not the events' time, orders an entity's events: a
// call.ended dated by its last participant's end, before the call.updated
// published just before it (the recording attached a few seconds after the end),
// ends the call. Ordered by time it was dropped as superseded and the call
// stayed open.
func TestCallEndedDatedBeforeUpdateEndsTheCall(t *testing.T) {
	h := newHarness(t)
	c1 := "calls/1000"
	created := mustEvent(t, events.CallCreated, c1, "1", t0, events.CallData{Call: call1000(customer(13, t0))})
	updated := mustEvent(t, events.CallUpdated, c1, "2", t0.Add(90*time.Second), events.CallUpdatedData{Call: call1000(customer(1, t0.Add(80*time.Second))),
		Changes: []events.Change{{Field: "recording", Previous: []byte("null"), Current: []byte(`{"id":1}`)}}})
	ended := mustEvent(t, events.CallEnded, c1, "3", t0.Add(80*time.Second), events.CallData{Call: call1000(customer(1, t0.Add(80*time.Second)))})
	h.publish(created, "")
	h.publish(updated, "")
	last := h.publish(ended, "")
	c := h.config("order")
	c.Workers = 1 // in stream order, as one replica with one worker takes them
	r := h.serve(c)
	h.settled(c.Durable, last)
	if snap := r.state(t); len(snap.Calls) != 0 {
		t.Fatalf("calls left open: %+v", snap.Calls)
	}
	if v := r.metric(t, `consumer_example_messages_total{outcome="superseded"}`); v != 0 {
		t.Fatalf("%v events superseded, want 0: each came after the one before it in the stream", v)
	}
	r.stop(t)
	h.audit(c.Durable)
}

// A failing message is redelivered after the ack wait of each next delivery and
// dead-lettered after their sum (deadLetteredAfter), not later: the server adds
// the failed delivery's ack wait to a nak's delay, which delay takes off.
func TestRetryScheduleFollowsBackOff(t *testing.T) {
	h := newHarness(t)
	bad := userEvents(t, 1, 1)[0]
	h.publish(bad, "")
	c := h.config("schedule")
	c.AckWait, c.BackOff = 200*time.Millisecond, []time.Duration{2 * time.Second, 4 * time.Second}
	var mu sync.Mutex
	var tries []time.Time
	h.start(c, func(commitFunc) commitFunc {
		return func(context.Context, events.Event, uint64) (outcome, string, error) {
			mu.Lock()
			tries = append(tries, time.Now())
			mu.Unlock()
			return "", "", errors.New("downstream unavailable")
		}
	})
	waitFor(t, 30*time.Second, "a dead letter", func() bool { return len(h.deadLetterMsgs()) == 1 })
	mu.Lock()
	defer mu.Unlock()
	if len(tries) != c.MaxDeliver {
		t.Fatalf("%d tries, want %d", len(tries), c.MaxDeliver)
	}
	waits := c.ackWaits()
	for i := 1; i < len(tries); i++ {
		// Late by up to 1.5 s on a loaded machine; the server's excess (the
		// ack wait of the failed delivery less the first: 1.8 s on the last) is more.
		if gap := tries[i].Sub(tries[i-1]); gap < waits[i]-50*time.Millisecond || gap > waits[i]+1500*time.Millisecond {
			t.Errorf("try %d came %s after the one before, want %s (the ack wait of delivery %d)", i+1, gap, waits[i], i+1)
		}
	}
	if got, want := tries[len(tries)-1].Sub(tries[0]), deadLetteredAfter(waits, c.MaxDeliver); got > want+3*time.Second {
		t.Errorf("dead-lettered %s after the first try, want about %s", got, want)
	}
}

// With the defaults, a failing message is dead-lettered after 46 minutes, as the
// README says; each nak's delay is what makes the server redeliver on that schedule.
func TestDefaultScheduleIs46Minutes(t *testing.T) {
	c, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := deadLetteredAfter(c.ackWaits(), c.MaxDeliver); got != 46*time.Minute {
		t.Fatalf("dead-lettered after %s, want 46m", got)
	}
	p := &processor{ackWaits: c.ackWaits()}
	// The server redelivers a delivery n nak'ed with delay d after
	// d + ackWaits[n-1] - ackWaits[0].
	for n := 1; n < c.MaxDeliver; n++ {
		if got := p.delay(uint64(n)) + p.ackWaits[n-1] - p.ackWaits[0]; got != p.ackWaits[n] {
			t.Errorf("delivery %d redelivered %s after its nak, want %s", n, got, p.ackWaits[n])
		}
	}
}

// A replica that died holding a claim does not cost the redelivery a delivery:
// the claim ends within its short ttl, and a delivery that finds it held waits
// for it instead of giving the message back.
func TestDeadReplicasClaimCostsNoDelivery(t *testing.T) {
	h := newHarness(t)
	ev := userEvents(t, 3, 1)[0]
	c := h.config("claims")
	c.AckWait = 20 * time.Second // longer than a claim lives
	st := newStore(h.rdb, c.Durable, c.DedupTTL)
	if err := h.rdb.Set(t.Context(), st.key("claim", ev.ID), "dead-replica/1", claimTTL(c.AckWait)).Err(); err != nil {
		t.Fatal(err)
	}
	last := h.publish(ev, "")
	start := time.Now()
	l := h.start(c, nil)
	h.settled(c.Durable, last)
	if took := time.Since(start); took > claimTTL(c.AckWait)+5*time.Second {
		t.Errorf("applied %s after the claim was left, want within its ttl %s", took, claimTTL(c.AckWait))
	}
	l.stop(t)
	if n := counterValue(l.metrics.redeliveries) + counterValue(l.metrics.naks); n != 0 {
		t.Fatalf("%v redeliveries and naks, want 0: the held claim cost a delivery", n)
	}
	if n := h.audit(c.Durable); n != 1 {
		t.Fatalf("%d applied, want 1", n)
	}
}
