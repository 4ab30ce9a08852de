package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/simtest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// An event resent under a new stream sequence (the poller's relay resending after
// JetStream's duplicate window) is handled once, and both copies are acked.
func TestDuplicateWithNewSequenceHandledOnce(t *testing.T) {
	h := newHarness(t)
	a := mustEvent(t, event.UserCreated, "users/8", "created", t0, event.UserData{User: yara()})
	b := mustEvent(t, event.UserDeleted, "users/8", "deleted", t0.Add(time.Minute), event.UserData{User: yara()})
	h.publish(a, "")
	h.publish(a, a.ID+"-resent") // same event, new sequence
	last := h.publish(b, "")
	if last != 3 {
		t.Fatalf("want 3 messages in the stream, got last sequence %d", last)
	}
	var calls counter
	r := h.start(h.config("dup"), func(_ context.Context, e event.Envelope) error { calls.add(e.ID); return nil })
	h.settled("dup", last)
	r.stop(t)
	if calls.get(a.ID) != 1 || calls.get(b.ID) != 1 {
		t.Fatalf("handled a %d times, b %d times; want once each", calls.get(a.ID), calls.get(b.ID))
	}
}

// A message handled and marked whose ack is lost (the process died just before
// acking) is redelivered, recognised as handled, and acked without handling it again.
func TestRedeliveryAfterLostAckHandledOnce(t *testing.T) {
	h := newHarness(t)
	e := mustEvent(t, event.CallCreated, "calls/1000", "created", t0, event.CallData{Call: call1000(customer(13, t0))})
	seq := h.publish(e, "")
	c := h.config("lost-ack")
	var calls counter
	handle := func(_ context.Context, e event.Envelope) error { calls.add(e.ID); return nil }

	// The first delivery, by hand: claim, handle, mark done, and no ack (a nak
	// brings the redelivery now instead of after the ack wait).
	cons, err := ensureConsumer(t.Context(), h.js, c)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	d := newDedup(h.rdb, c.Durable, c.AckWait, c.DedupTTL)
	if got, err := d.claim(t.Context(), e.ID); err != nil || got != claimed {
		t.Fatalf("claim: %v %v", got, err)
	}
	if err := handle(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if err := d.done(t.Context(), e.ID); err != nil {
		t.Fatal(err)
	}
	if err := msg.Nak(); err != nil {
		t.Fatal(err)
	}

	r := h.start(c, handle)
	h.settled(c.Durable, seq)
	r.stop(t)
	if n := calls.get(e.ID); n != 1 {
		t.Fatalf("handled %d times, want 1", n)
	}
}

// A handler that keeps failing transiently is retried with a delay, then after
// max-deliver deliveries the message is terminated and a copy dead-lettered.
func TestDeadLetterAfterMaxDeliver(t *testing.T) {
	h := newHarness(t)
	bad := mustEvent(t, event.CallCreated, "calls/1000", "created", t0, event.CallData{Call: call1000()})
	good := mustEvent(t, event.UserCreated, "users/8", "created", t0, event.UserData{User: yara()})
	badSeq := h.publish(bad, "")
	last := h.publish(good, "")
	c := h.config("dlq")
	var calls counter
	r := h.start(c, func(_ context.Context, e event.Envelope) error {
		calls.add(e.ID)
		if e.ID == bad.ID {
			return errors.New("downstream unavailable")
		}
		return nil
	})
	h.settled(c.Durable, last)
	simtest.WaitFor(t, settle, "a dead letter", func() bool { return len(h.deadLetterMsgs()) == 1 })
	r.stop(t)

	if n := calls.get(bad.ID); n != c.MaxDeliver {
		t.Fatalf("failing event handled %d times, want %d (max deliver)", n, c.MaxDeliver)
	}
	if n := calls.get(good.ID); n != 1 {
		t.Fatalf("good event handled %d times, want 1", n)
	}
	m := h.deadLetterMsgs()[0]
	orig := event.Subject("callcenter", "acme", event.CallCreated)
	if m.Subject != "callcenter-dlq."+orig {
		t.Errorf("dead letter subject %q, want callcenter-dlq.%s", m.Subject, orig)
	}
	want := map[string]string{
		HeaderDLQStream: "CALLCENTER", HeaderDLQSequence: "1", HeaderDLQSubject: orig,
		HeaderDLQConsumer: "dlq", HeaderDLQDeliveries: "3", "Content-Type": event.ContentType,
	}
	for k, v := range want {
		if got := m.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if r := m.Header.Get(HeaderDLQReason); !strings.Contains(r, "failed 3 deliveries") || !strings.Contains(r, "downstream unavailable") {
		t.Errorf("reason %q", r)
	}
	body, _ := json.Marshal(bad)
	if string(m.Data) != string(body) || badSeq != 1 {
		t.Errorf("dead letter body %s, want the original %s", m.Data, body)
	}
}

// Undecodable JSON, an unknown type and undecodable data are dead-lettered on
// their first delivery, without retries.
func TestPoisonDeadLetteredAtOnce(t *testing.T) {
	h := newHarness(t)
	unknown := mustEvent(t, event.CallCreated, "calls/1", "x", t0, event.CallData{Call: call1000()})
	unknown.Type = "call.exploded"
	badData := mustEvent(t, event.UserCreated, "users/8", "x", t0, []int{1, 2})
	h.publishRaw("callcenter.acme.call.created", []byte(`{"specversion":"1.0",`), "p1")
	h.publish(unknown, "")
	last := h.publish(badData, "")

	c := h.config("poison")
	r := h.start(c, handler(newView(), io.Discard))
	simtest.WaitFor(t, settle, "three dead letters", func() bool { return len(h.deadLetterMsgs()) == 3 })
	h.settled(c.Durable, last)
	r.stop(t)

	for i, want := range []string{"undecodable event", "unknown type", "user.created data"} {
		m := h.deadLetterMsgs()[i]
		if r := m.Header.Get(HeaderDLQReason); !strings.Contains(r, want) {
			t.Errorf("dead letter %d: reason %q, want it to mention %q", i, r, want)
		}
		if d := m.Header.Get(HeaderDLQDeliveries); d != "1" {
			t.Errorf("dead letter %d: after %s deliveries, want 1", i, d)
		}
	}
}

// Cancelling while a message is in the handler finishes it and the others already
// received, stops pulling, and returns; whatever was not acked comes back to the
// next run. Every event is handled exactly once across the two runs.
func TestDrainLosesNothing(t *testing.T) {
	h := newHarness(t)
	const n = 40
	var last uint64
	for i := range n {
		e := mustEvent(t, event.UserCreated, "users/8", string(rune('A'+i)), t0.Add(time.Duration(i)*time.Second), event.UserData{User: yara()})
		last = h.publish(e, "")
	}
	c := h.config("drain")
	c.AckWait = time.Second // what the first run leaves unacked comes back quickly

	var calls counter
	inHandler := make(chan struct{})
	release := make(chan struct{})
	first := h.start(c, func(_ context.Context, e event.Envelope) error {
		calls.add(e.ID)
		if total, _ := calls.total(); total == 5 {
			close(inHandler)
			<-release // in flight while the context is cancelled
		}
		return nil
	})
	<-inHandler
	first.cancel()
	close(release)
	first.stop(t)
	handledFirst, _ := calls.total()
	if handledFirst < 5 || handledFirst >= n {
		t.Fatalf("first run handled %d of %d: want the one in flight finished and pulling stopped", handledFirst, n)
	}

	second := h.start(c, func(_ context.Context, e event.Envelope) error { calls.add(e.ID); return nil })
	h.settled(c.Durable, last)
	second.stop(t)
	total, ids := calls.total()
	if ids != n || total != n {
		t.Fatalf("handled %d events in %d calls, want each of the %d exactly once (first run: %d)", ids, total, n, handledFirst)
	}
}

func TestConfig(t *testing.T) {
	env := map[string]string{"CONSUMER_MAX_DELIVER": "7", "CONSUMER_DURABLE": "from-env", "CONSUMER_FILTER": "x.>,y.>"}
	c, err := parseConfig([]string{"--durable", "board", "--filter", "callcenter.acme.>"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxDeliver != 7 || c.Durable != "board" || len(c.Filters) != 1 || c.Filters[0] != "callcenter.acme.>" {
		t.Fatalf("got %+v", c)
	}
	c, err = parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || strings.Join(c.Filters, " ") != "x.> y.>" || c.DeadLetter != "callcenter-dlq" {
		t.Fatalf("env filters: %+v %v", c, err)
	}
	for _, args := range [][]string{{"--max-deliver", "0"}, {"--durable", "a.b"}, {"--ack-wait", "0s"}, {"--nope"}, {"extra"}} {
		err := run(t.Context(), args, func(string) string { return "" }, io.Discard, io.Discard)
		if !errors.As(err, new(usageError)) {
			t.Errorf("%v: want a usage error (exit 2), got %v", args, err)
		}
	}
}

// While Redis (the dedup store) is down, messages are retried with a delay and
// never dead-lettered, however many deliveries it takes: the message is fine.
func TestRedisOutageRetriesWithoutDeadLetter(t *testing.T) {
	h := newHarness(t)
	e := mustEvent(t, event.UserCreated, "users/8", "created", t0, event.UserData{User: yara()})
	c := h.config("outage")
	c.MaxDeliver = 2
	h.redis.Stop()
	seq := h.publish(e, "")
	var calls counter
	h.start(c, func(_ context.Context, e event.Envelope) error { calls.add(e.ID); return nil })
	cons, err := h.js.Consumer(t.Context(), "CALLCENTER", c.Durable)
	if err != nil {
		t.Fatal(err)
	}
	simtest.WaitFor(t, settle, "three deliveries while Redis is down", func() bool {
		i, err := cons.Info(t.Context())
		return err == nil && i.Delivered.Consumer >= 3
	})
	h.redis.Restart(t)
	h.settled(c.Durable, seq)
	if n := calls.get(e.ID); n != 1 {
		t.Fatalf("handled %d times, want 1", n)
	}
	if n := len(h.deadLetterMsgs()); n != 0 {
		t.Fatalf("%d dead letters during a Redis outage, want none", n)
	}
}

// TestContinuesTrace checks that a delivery's span continues the trace named by
// the message's lower-case traceparent header (the poller's publish span).
func TestContinuesTrace(t *testing.T) {
	h := newHarness(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	e := mustEvent(t, event.UserCreated, "users/8", "created", t0, event.UserData{User: yara()})
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	m := &nats.Msg{Subject: event.Subject("callcenter", "acme", e.Type), Data: body, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, e.ID)
	m.Header["traceparent"] = []string{"00-" + traceID + "-" + parentID + "-01"}
	ack, err := h.js.PublishMsg(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	c := h.config("traced")
	r := h.startTraced(c, func(context.Context, event.Envelope) error { return nil }, tp.Tracer("test"))
	h.settled("traced", ack.Sequence)
	r.stop(t)
	for _, sp := range sr.Ended() {
		if strings.HasPrefix(sp.Name(), "consume ") {
			if sp.SpanContext().TraceID().String() != traceID || sp.Parent().SpanID().String() != parentID {
				t.Fatalf("consumer span %s/%s does not continue %s/%s", sp.SpanContext().TraceID(), sp.Parent().SpanID(), traceID, parentID)
			}
			return
		}
	}
	t.Fatal("no consumer span")
}
