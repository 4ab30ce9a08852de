package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace/noop"
)

// harness is a real NATS server with the CALLCENTER stream, and a real Redis.
type harness struct {
	t     *testing.T
	nats  *natsServer
	js    jetstream.JetStream
	redis *redisServer
	rdb   *redis.Client

	mu        sync.Mutex
	published map[uint64]events.Envelope // by stream sequence
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessStore(t, true)
}

// newHarnessStore is newHarness with the stream in memory or on disk (to survive a
// restart of the server).
func newHarnessStore(t *testing.T, memory bool) *harness {
	t.Helper()
	h := &harness{t: t, nats: startNATS(t), redis: startRedis(t), published: map[uint64]events.Envelope{}}
	h.rdb = h.redis.Client(t)
	js, err := jetstream.New(h.nats.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	h.js = js
	// A short duplicate window, so that the replay test need not wait long.
	if err := ensureStream(t.Context(), js, "CALLCENTER", "callcenter", time.Second, memory); err != nil {
		t.Fatal(err)
	}
	return h
}

// config is a test configuration: short waits, three deliveries.
func (h *harness) config(durable string) config {
	return config{
		NATSURL: h.nats.URL(), Stream: "CALLCENTER", Durable: durable, Prefix: "callcenter", Account: events.Any,
		RedisURL: h.redis.URL, DedupTTL: time.Hour, MaxDeliver: 3, AckWait: 2 * time.Second,
		BackOff: []time.Duration{2 * time.Second, 2 * time.Second}, HandleTimeout: time.Minute,
		Workers: 4, DeadLetter: "callcenter-dlq", HTTPAddr: "127.0.0.1:0",
		LagInterval: 50 * time.Millisecond, ShutdownTimeout: 5 * time.Second,
	}
}

// args is c as command-line flags, for a child process.
func (c config) args() []string {
	waits := make([]string, len(c.BackOff))
	for i, d := range c.BackOff {
		waits[i] = d.String()
	}
	a := []string{"--nats-url", c.NATSURL, "--durable", c.Durable, "--redis-url", c.RedisURL,
		"--max-deliver", fmt.Sprint(c.MaxDeliver), "--ack-wait", c.AckWait.String(), "--backoff", strings.Join(waits, ","),
		"--workers", fmt.Sprint(c.Workers), "--http-addr", c.HTTPAddr,
		"--lag-interval", c.LagInterval.String(), "--shutdown-timeout", c.ShutdownTimeout.String()}
	for _, f := range c.Filters {
		a = append(a, "--filter", f)
	}
	return a
}

// publish sends e as the poller does: subject, Nats-Msg-Id, Content-Type. msgID
// overrides the Nats-Msg-Id (a resend after the duplicate window gets a new
// sequence; here a different id does the same).
func (h *harness) publish(e events.Envelope, msgID string) uint64 {
	h.t.Helper()
	body, err := json.Marshal(e)
	if err != nil {
		h.t.Fatal(err)
	}
	if msgID == "" {
		msgID = e.ID
	}
	seq := h.publishRaw(events.Subject("callcenter", "acme", e.Type), body, msgID)
	h.mu.Lock()
	h.published[seq] = e
	h.mu.Unlock()
	return seq
}

func (h *harness) publishRaw(subject string, body []byte, msgID string) uint64 {
	h.t.Helper()
	m := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	m.Header.Set("Content-Type", events.ContentType)
	ack, err := h.js.PublishMsg(h.t.Context(), m)
	if err != nil {
		h.t.Fatalf("publish %s: %v", subject, err)
	}
	return ack.Sequence
}

// replica is serve running in a goroutine: one replica of the service, with its
// own connections, HTTP server and metrics.
type replica struct {
	out, log *buffer
	addr     string
	cancel   context.CancelFunc
	done     chan error
}

func (h *harness) serve(c config) *replica {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.t.Context())
	r := &replica{out: &buffer{}, log: &buffer{}, cancel: cancel, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		r.done <- serve(ctx, c, noop.NewTracerProvider(), r.out, zerolog.New(r.log), func(a string) { addr <- a })
	}()
	select {
	case r.addr = <-addr:
	case err := <-r.done:
		h.t.Fatalf("serve: %v\n%s", err, r.log)
	}
	h.t.Cleanup(func() {
		cancel()
		<-r.done
		if h.t.Failed() {
			h.t.Logf("replica at %s:\n%s", r.addr, r.log)
		}
	})
	return r
}

// stop cancels the replica and waits for it to drain.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, r.log)
		}
		r.done <- nil // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after cancel")
	}
}

func (r *replica) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + r.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (r *replica) state(t *testing.T) snapshot {
	t.Helper()
	code, body := r.get(t, "/state")
	var snap snapshot
	if err := json.Unmarshal([]byte(body), &snap); code != http.StatusOK || err != nil {
		t.Fatalf("GET /state: %d %v\n%s", code, err, body)
	}
	return snap
}

// metric returns the value of one sample of GET /metrics ("name{labels}"), 0 when absent.
func (r *replica) metric(t *testing.T, sample string) float64 {
	t.Helper()
	_, body := r.get(t, "/metrics")
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), sample+" "); ok {
			var f float64
			_, _ = fmt.Sscan(v, &f)
			return f
		}
	}
	return 0
}

// loop is consume with a processor built by the test: a replica without HTTP.
type loop struct {
	cancel  context.CancelFunc
	done    chan error
	metrics *metrics
	out     *buffer
}

// start runs consume with the real store, its commit wrapped by wrap (nil: as is).
func (h *harness) start(c config, wrap func(commitFunc) commitFunc) *loop {
	h.t.Helper()
	return h.startWith(c, func(p *processor) {
		if wrap != nil {
			p.commit = wrap(p.commit)
		}
	})
}

// startWith runs consume with a processor adjusted by adjust.
func (h *harness) startWith(c config, adjust func(*processor)) *loop {
	h.t.Helper()
	ctx, cancel := context.WithCancel(h.t.Context())
	cons, err := ensureConsumer(ctx, h.js, c)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, _, err := ensureDeadLetterStream(ctx, h.js, c.Stream, c.DeadLetter); err != nil {
		h.t.Fatal(err)
	}
	l := &loop{cancel: cancel, done: make(chan error, 1), metrics: newMetrics(prometheus.NewRegistry()), out: &buffer{}}
	p := newProcessor(c, newStore(h.rdb, c.Durable, c.DedupTTL), &deadLetters{js: h.js, prefix: c.DeadLetter},
		l.metrics, l.out, zerolog.New(h.t.Output()), noop.NewTracerProvider())
	adjust(p)
	go func() { l.done <- consume(ctx, cons, p, c.Workers, c.ShutdownTimeout, zerolog.New(h.t.Output())) }()
	h.t.Cleanup(func() { cancel(); <-l.done; l.done <- nil })
	return l
}

func (l *loop) stop(t *testing.T) {
	t.Helper()
	l.cancel()
	select {
	case err := <-l.done:
		if err != nil {
			t.Fatalf("consume: %v", err)
		}
		l.done <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("consume did not return after cancel")
	}
}
