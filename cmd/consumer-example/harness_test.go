package main

import (
	"context"
	"encoding/json"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/callbus/callbus/internal/simtest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// harness is a real NATS server with the CALLCENTER stream, and a real Redis.
type harness struct {
	t     *testing.T
	nats  *natstest.Server
	js    jetstream.JetStream
	redis *redistest.Server
	rdb   *redis.Client
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, nats: natstest.Start(t), redis: redistest.Start(t)}
	h.rdb = h.redis.Client(t)
	js, err := jetstream.New(h.nats.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	h.js = js
	if _, _, err := publish.EnsureStream(t.Context(), js, publish.StreamConfig{
		Name: "CALLCENTER", Prefix: "callcenter", MaxAge: time.Hour, Dupes: time.Minute, Memory: true,
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// config is a test configuration: short delays, three deliveries.
func (h *harness) config(durable string) config {
	return config{
		NATSURL: h.nats.URL(), Stream: "CALLCENTER", Durable: durable, Filters: []string{"callcenter.>"},
		RedisURL: h.redis.URL, DedupTTL: time.Hour, MaxDeliver: 3, AckWait: 5 * time.Second,
		RetryDelay: 5 * time.Millisecond, DeadLetter: "callcenter-dlq", HTTPAddr: "127.0.0.1:0",
		LagInterval: time.Hour, ShutdownTimeout: 5 * time.Second,
	}
}

// publish sends e as the poller does: subject, Nats-Msg-Id, Content-Type. msgID
// overrides the Nats-Msg-Id (a resend after the duplicate window gets a new one
// only in effect: here, a different id gives the same event a new sequence).
func (h *harness) publish(e event.Envelope, msgID string) uint64 {
	h.t.Helper()
	body, err := json.Marshal(e)
	if err != nil {
		h.t.Fatal(err)
	}
	if msgID == "" {
		msgID = e.ID
	}
	return h.publishRaw(event.Subject("callcenter", "acme", e.Type), body, msgID)
}

func (h *harness) publishRaw(subject string, body []byte, msgID string) uint64 {
	h.t.Helper()
	m := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	m.Header.Set("Content-Type", event.ContentType)
	ack, err := h.js.PublishMsg(h.t.Context(), m)
	if err != nil {
		h.t.Fatalf("publish %s: %v", subject, err)
	}
	return ack.Sequence
}

// running is a consume loop in a goroutine.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

// start runs consume with the handler until stop.
func (h *harness) start(c config, handle handlerFunc) *running {
	h.t.Helper()
	return h.startTraced(c, handle, nil)
}

// startTraced is start with deliveries traced by tracer.
func (h *harness) startTraced(c config, handle handlerFunc, tracer trace.Tracer) *running {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.t.Context())
	cons, err := ensureConsumer(ctx, h.js, c)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, _, err := ensureDeadLetterStream(ctx, h.js, c.Stream, c.DeadLetter); err != nil {
		h.t.Fatal(err)
	}
	p := &processor{
		handle: handle, dedup: newDedup(h.rdb, c.Durable, c.AckWait, c.DedupTTL),
		dead: &deadLetters{js: h.js, prefix: c.DeadLetter}, maxDeliver: c.MaxDeliver, retryDelay: c.RetryDelay,
		log: zerolog.New(h.t.Output()), tracer: tracer,
	}
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- consume(ctx, cons, p, c.ShutdownTimeout) }()
	h.t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// stop cancels the loop and waits for it to drain.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("consume: %v", err)
		}
		r.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("consume did not return after cancel")
	}
}

// settled waits until the consumer has nothing pending or unacknowledged and has
// acknowledged (or terminated) up to stream sequence last.
func (h *harness) settled(durable string, last uint64) {
	h.t.Helper()
	simtest.WaitFor(h.t, settle, fmt.Sprintf("consumer %s settled at %d", durable, last), func() bool {
		info, err := h.js.Consumer(h.t.Context(), "CALLCENTER", durable)
		if err != nil {
			h.t.Fatal(err)
		}
		i, err := info.Info(h.t.Context())
		if err != nil {
			h.t.Fatal(err)
		}
		return i.NumPending == 0 && i.NumAckPending == 0 && i.AckFloor.Stream >= last
	})
}

// deliveries is how many deliveries the consumer has made, redeliveries included.
func (h *harness) deliveries(durable string) uint64 {
	h.t.Helper()
	cons, err := h.js.Consumer(h.t.Context(), "CALLCENTER", durable)
	if err != nil {
		h.t.Fatal(err)
	}
	return cons.CachedInfo().Delivered.Consumer
}

// deadLetterMsgs returns the messages of the dead-letter stream.
func (h *harness) deadLetterMsgs() []*jetstream.RawStreamMsg {
	h.t.Helper()
	s, err := h.js.Stream(h.t.Context(), "CALLCENTER_DLQ")
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := s.Info(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	var msgs []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(h.t.Context(), seq)
		if err != nil {
			h.t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// settle is how long tests wait for a condition before failing.
const settle = 15 * time.Second

// counter counts handler calls per event id.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
	return c.n[id]
}

func (c *counter) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

func (c *counter) total() (calls, ids int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.n {
		calls += n
	}
	return calls, len(c.n)
}

// Test events, built as the poller builds them.

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func mustEvent(t *testing.T, typ event.Type, entity, stateKey string, at time.Time, data any) event.Envelope {
	t.Helper()
	e, err := event.New("acme", typ, entity, stateKey, at, data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func yara() callcenter.User {
	return callcenter.User{ID: 8, Name: "Yara Patel", Email: "yara@example.com", Role: callcenter.RoleAgent,
		Status: callcenter.UserOnline, Preference: 1, TimeZone: "UTC", Teams: []callcenter.TeamRef{}}
}

func customer(status int, at time.Time) callcenter.Participant {
	return callcenter.Participant{ID: 5001, CallID: 1000, ParticipantID: 304684, ParticipantType: callcenter.ParticipantCustomer,
		CallStatus: status, CreatedTime: t0, UpdatedTime: at}
}

func agentLeg(status int, at time.Time) callcenter.Participant {
	return callcenter.Participant{ID: 5002, CallID: 1000, ParticipantID: 8, ParticipantType: callcenter.ParticipantAgent,
		ConnectionType: 1, CallStatus: status, CreatedTime: at, UpdatedTime: at}
}

func call1000(ps ...callcenter.Participant) callcenter.Call {
	q := "Billing Queue"
	return callcenter.Call{ID: 1000, Direction: callcenter.DirectionIncoming, PhoneNumber: "+15550100",
		AssignedCallQueueName: &q, BillDuration: 95, BillDurationUnit: "seconds", CreatedTime: t0, UpdatedTime: t0,
		Participants: ps}
}
