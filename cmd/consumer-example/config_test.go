package main

import (
	"encoding/json"
	"errors"
	"github.com/callbus/callbus/events"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestConfig(t *testing.T) {
	env := map[string]string{"CONSUMER_MAX_DELIVER": "7", "CONSUMER_DURABLE": "from-env", "CONSUMER_BACKOFF": "1s,2s"}
	getenv := func(k string) string { return env[k] }
	c, err := parseConfig([]string{"--durable", "board", "--account", "acme"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxDeliver != 7 || c.Durable != "board" || !slices.Equal(c.ackWaits(), []time.Duration{30 * time.Second, time.Second, 2 * time.Second}) {
		t.Fatalf("got %+v", c)
	}
	f := c.filters()
	if len(f) != len(appliedTypes) || f[0] != "callcenter.acme.user.created" || slices.Contains(f, "callcenter.acme.team.created") {
		t.Fatalf("filters %v: want the applied types of account acme", f)
	}
	c, err = parseConfig([]string{"--filter", "x.>,y.>"}, func(string) string { return "" }, io.Discard)
	if err != nil || strings.Join(c.filters(), " ") != "x.> y.>" || c.Account != "*" || len(c.BackOff) != 4 {
		t.Fatalf("explicit filters: %+v %v", c, err)
	}
	for _, args := range [][]string{{"--max-deliver", "0"}, {"--durable", "a.b"}, {"--ack-wait", "0s"}, {"--nope"}, {"extra"},
		{"--max-deliver", "2"}, {"--crash-at", "later:1"}, {"--account", "a.b"}} {
		err := run(t.Context(), args, func(string) string { return "" }, io.Discard, io.Discard)
		if !errors.As(err, new(usageError)) {
			t.Errorf("%v: want a usage error (exit 2), got %v", args, err)
		}
	}
}

// A delivery's span continues the trace named by the message's lower-case
// traceparent header (the poller's publish span).
func TestContinuesTrace(t *testing.T) {
	h := newHarness(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	e := userEvents(t, 8, 1)[0]
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	m := &nats.Msg{Subject: events.Subject("callcenter", "acme", e.Type), Data: body, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, e.ID)
	m.Header["traceparent"] = []string{"00-" + traceID + "-" + parentID + "-01"}
	ack, err := h.js.PublishMsg(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	c := h.config("traced")
	l := h.startWith(c, func(p *processor) { p.tracer = tp.Tracer("test") })
	h.settled("traced", ack.Sequence)
	l.stop(t)
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
