package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// An event resent under a new stream sequence (the poller's relay resending after
// JetStream's duplicate window) is applied once, and both copies are acked.
func TestDuplicateWithNewSequenceAppliedOnce(t *testing.T) {
	h := newHarness(t)
	evs := userEvents(t, 8, 2)
	h.publish(evs[0], "")
	h.publish(evs[0], evs[0].ID+"-resent")
	last := h.publish(evs[1], "")
	c := h.config("dup")
	c.Workers = 1 // in stream order: the first event is applied, not superseded by the second
	l := h.start(c, nil)
	h.settled(c.Durable, last)
	l.stop(t)
	if n := h.audit(c.Durable); n != 2 {
		t.Fatalf("%d events applied, want 2", n)
	}
	if d := l.metrics.messages.WithLabelValues(string(duplicate)); counterValue(d) != 1 {
		t.Fatalf("duplicates counted %v, want 1", counterValue(d))
	}
}

// A commit that keeps failing is retried with a delay, then at the last delivery
// the message is terminated, a copy dead-lettered with the reason, and counted.
// Once the cause is fixed, replay-dead-letters sends it back and it is applied.
func TestDeadLetterAfterMaxDeliverThenReplay(t *testing.T) {
	h := newHarness(t)
	bad, good := userEvents(t, 1, 1)[0], userEvents(t, 2, 1)[0]
	h.publish(bad, "")
	last := h.publish(good, "")
	c := h.config("dlq")
	var broken atomic.Bool
	broken.Store(true)
	var calls sync.Map
	l := h.start(c, func(next commitFunc) commitFunc {
		return func(ctx context.Context, ev events.Event, seq uint64) (outcome, string, error) {
			n, _ := calls.LoadOrStore(ev.Metadata().ID, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			if broken.Load() && ev.Metadata().ID == bad.ID {
				return "", "", errors.New("downstream unavailable")
			}
			return next(ctx, ev, seq)
		}
	})
	h.settled(c.Durable, last)
	waitFor(t, 30*time.Second, "a dead letter", func() bool { return len(h.deadLetterMsgs()) == 1 })
	if n, _ := calls.Load(bad.ID); n.(*atomic.Int32).Load() != int32(c.MaxDeliver) {
		t.Fatalf("failing event tried %d times, want %d (max deliver)", n.(*atomic.Int32).Load(), c.MaxDeliver)
	}
	m := h.deadLetterMsgs()[0]
	want := map[string]string{HeaderDLQStream: "CALLCENTER", HeaderDLQSequence: "1", HeaderDLQSubject: "callcenter.acme.user.created",
		HeaderDLQConsumer: "dlq", HeaderDLQDeliveries: "3", "Content-Type": events.ContentType}
	for k, v := range want {
		if got := m.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if r := m.Header.Get(HeaderDLQReason); !strings.Contains(r, "failed 3 deliveries") || !strings.Contains(r, "downstream unavailable") {
		t.Errorf("reason %q", r)
	}
	if v := counterValue(l.metrics.deadLetters.WithLabelValues(causeFailed)); v != 1 {
		t.Errorf("dead letters counted %v, want 1", v)
	}

	broken.Store(false) // the cause is fixed
	var out buffer
	waitFor(t, 30*time.Second, "the replay (after the stream's duplicate window)", func() bool {
		err := run(t.Context(), []string{"replay-dead-letters", "--nats-url", h.nats.URL(), "--durable", "dlq"}, func(string) string { return "" }, &out, io.Discard)
		return err == nil && strings.Contains(out.String(), "1 replayed")
	})
	waitFor(t, 30*time.Second, "the replayed event applied", func() bool { return len(h.applied(c.Durable)) == 2 })
	l.stop(t)
	if n := len(h.deadLetterMsgs()); n != 0 {
		t.Errorf("%d dead letters left after the replay", n)
	}
	h.audit(c.Durable)
}

// Undecodable JSON and data that does not fit its type are dead-lettered on their
// first delivery; an unknown type on a subscribed subject is acked and counted.
func TestInvalidDeadLetteredUnknownAcked(t *testing.T) {
	h := newHarness(t)
	h.publishRaw("callcenter.acme.user.created", []byte(`{"specversion":"1.0",`), "p1")
	badData := mustEvent(t, events.UserCreated, "users/8", "x", t0, []int{1, 2})
	h.publish(badData, "")
	unknown := mustEvent(t, events.CallCreated, "calls/1", "x", t0, map[string]int{"n": 1})
	unknown.Type = "call.transcribed"
	last := h.publish(unknown, "")

	c := h.config("poison")
	c.Filters = []string{"callcenter.acme.>"} // every type, so that the unknown one is delivered
	l := h.start(c, nil)
	h.settled(c.Durable, last)
	l.stop(t)
	dl := h.deadLetterMsgs()
	if len(dl) != 2 {
		t.Fatalf("%d dead letters, want 2 (the unknown type is not one)", len(dl))
	}
	for i, m := range dl {
		if d := m.Header.Get(HeaderDLQDeliveries); d != "1" || !strings.Contains(m.Header.Get(HeaderDLQReason), "invalid event") {
			t.Errorf("dead letter %d: after %s deliveries, reason %q", i, d, m.Header.Get(HeaderDLQReason))
		}
	}
	if v := counterValue(l.metrics.unknown.WithLabelValues("call.transcribed")); v != 1 {
		t.Errorf("unknown events counted %v, want 1", v)
	}
}

// The default filter subscribes to the applied types only: a team event is never
// delivered.
func TestFilterAppliedTypesOnly(t *testing.T) {
	h := newHarness(t)
	h.publish(mustEvent(t, events.TeamCreated, "teams/1", "c", t0, events.TeamData{Team: events.Team{ID: 1, Users: []events.UserRef{}}}), "")
	last := h.publish(userEvents(t, 1, 1)[0], "")
	c := h.config("filter")
	l := h.start(c, nil)
	h.settled(c.Durable, last)
	l.stop(t)
	if i := h.consumerInfo(c.Durable); i.Delivered.Consumer != 1 {
		t.Fatalf("%d deliveries, want 1 (the team event is not subscribed)", i.Delivered.Consumer)
	}
}

// A handler slower than the ack wait keeps its message (InProgress) and its claim:
// with two replicas, each event is handled once and never redelivered.
func TestSlowHandlerLongerThanAckWait(t *testing.T) {
	h := newHarness(t)
	var last uint64
	for id := range int64(4) {
		last = h.publish(userEvents(t, id+1, 1)[0], "")
	}
	c := h.config("slow")
	c.AckWait, c.Workers = time.Second, 2
	var handled atomic.Int32
	slow := func(next commitFunc) commitFunc {
		return func(ctx context.Context, ev events.Event, seq uint64) (outcome, string, error) {
			handled.Add(1)
			select {
			case <-time.After(2500 * time.Millisecond): // the slow work, longer than the ack wait
			case <-ctx.Done():
				return "", "", ctx.Err()
			}
			return next(ctx, ev, seq)
		}
	}
	a, b := h.start(c, slow), h.start(c, slow)
	h.settled(c.Durable, last)
	a.stop(t)
	b.stop(t)
	if n := handled.Load(); n != 4 {
		t.Errorf("handled %d times, want 4 (once per event)", n)
	}
	if i := h.consumerInfo(c.Durable); i.Delivered.Consumer != 4 || i.NumRedelivered != 0 {
		t.Errorf("%d deliveries, %d redelivered; want 4 and 0", i.Delivered.Consumer, i.NumRedelivered)
	}
	h.audit(c.Durable)
}

// counterValue reads a counter of a loop's metrics.
func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}
