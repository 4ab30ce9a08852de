package publish

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// memOutbox is a hand-written Outbox for the relay's own interface.
type memOutbox struct {
	mu   sync.Mutex
	recs []Record
	fail error // ReadOutbox fails with it while set
}

func (m *memOutbox) add(n int, from int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := from; i < from+n; i++ {
		m.recs = append(m.recs, Record{
			StreamID: fmt.Sprintf("%d-0", 1000+i),
			ID:       fmt.Sprintf("evt-%d", i),
			Subject:  "callcenter.acme.call.created",
			Data:     []byte(fmt.Sprintf(`{"n":%d}`, i)),
			Headers:  map[string]string{"traceparent": fmt.Sprintf("00-%032x-%016x-01", i+1, i+1)},
		})
	}
}

func (m *memOutbox) ReadOutbox(_ context.Context, after string, count int) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []Record
	for _, r := range m.recs {
		if after == "" || CompareStreamIDs(r.StreamID, after) > 0 {
			out = append(out, r)
			if len(out) == count {
				break
			}
		}
	}
	return out, nil
}

func (m *memOutbox) TrimOutbox(_ context.Context, upTo string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = slices.DeleteFunc(m.recs, func(r Record) bool { return CompareStreamIDs(r.StreamID, upTo) <= 0 })
	return nil
}

func (m *memOutbox) len() int { m.mu.Lock(); defer m.mu.Unlock(); return len(m.recs) }

func setup(t *testing.T) (*natstest.Server, jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(64))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := EnsureStream(t.Context(), js, StreamConfig{Name: "CALLCENTER", Prefix: "callcenter", MaxAge: time.Hour, Dupes: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return srv, js, s
}

func relayCfg() RelayConfig {
	return RelayConfig{Stream: "CALLCENTER", Filter: "callcenter.acme.>", Batch: 16, AckWait: 2 * time.Second, Idle: 10 * time.Millisecond}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func streamMsgs(t *testing.T, s jetstream.Stream) []*jetstream.RawStreamMsg {
	t.Helper()
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatalf("get %d: %v", seq, err)
		}
		out = append(out, m)
	}
	return out
}

func checkInOrder(t *testing.T, msgs []*jetstream.RawStreamMsg, n int) {
	t.Helper()
	if len(msgs) != n {
		t.Fatalf("stream holds %d messages, want %d", len(msgs), n)
	}
	for i, m := range msgs {
		if got, want := m.Header.Get(jetstream.MsgIDHeader), fmt.Sprintf("evt-%d", i); got != want {
			t.Fatalf("message %d: Nats-Msg-Id %q, want %q (order or loss)", i, got, want)
		}
	}
}

func TestRelayPublishesInOrderWithHeaders(t *testing.T) {
	_, js, s := setup(t)
	ob := &memOutbox{}
	ob.add(100, 0)
	r := NewRelay(js, ob, relayCfg(), zerolog.Nop())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "outbox drained", func() bool { return ob.len() == 0 })
	cancel()
	<-done
	msgs := streamMsgs(t, s)
	checkInOrder(t, msgs, 100)
	m := msgs[7]
	if m.Header.Get("Content-Type") != "application/cloudevents+json" || m.Header.Get(HeaderOutboxID) != "1007-0" {
		t.Fatalf("headers %v", m.Header)
	}
	if v, ok := m.Header["traceparent"]; !ok || len(v) != 1 {
		t.Fatalf("lower-case traceparent header missing: %v", m.Header)
	}
	if got := r.Stats.Published.Load(); got != 100 {
		t.Fatalf("published %d want 100", got)
	}
}

func TestRelayResumeSkipsPublishedAfterCrash(t *testing.T) {
	_, js, s := setup(t)
	ob := &memOutbox{}
	ob.add(40, 0)
	// A crash after the acks and before the trim: published, not trimmed.
	for _, rec := range ob.recs[:25] {
		if _, err := js.PublishMsg(t.Context(), message(rec, "CALLCENTER")); err != nil {
			t.Fatal(err)
		}
	}
	// Simulate the duplicate window having passed: purge nothing, but make a relay
	// that would otherwise republish; resume must skip entries 0..24.
	r := NewRelay(js, ob, relayCfg(), zerolog.Nop())
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, streamMsgs(t, s), 40)
	if got := r.Stats.Skipped.Load(); got != 25 {
		t.Fatalf("skipped %d want 25", got)
	}
	if got := r.Stats.Duplicates.Load(); got != 0 {
		t.Fatalf("duplicates %d want 0: resume should have skipped them", got)
	}
}

func TestRelaySurvivesNATSRestart(t *testing.T) {
	srv, js, s := setup(t)
	ob := &memOutbox{}
	ob.add(30, 0)
	r := NewRelay(js, ob, relayCfg(), zerolog.Nop())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "first batch", func() bool { return ob.len() == 0 })
	srv.Restart(t)
	ob.add(50, 30)
	r.Wake()
	waitFor(t, "outbox drained after restart", func() bool { return ob.len() == 0 })
	cancel()
	<-done
	checkInOrder(t, streamMsgs(t, s), 80)
}

func TestRelayRetriesOutboxErrors(t *testing.T) {
	_, js, s := setup(t)
	ob := &memOutbox{fail: fmt.Errorf("redis down")}
	ob.add(5, 0)
	r := NewRelay(js, ob, relayCfg(), zerolog.Nop())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitFor(t, "an error counted", func() bool { return r.Stats.Errors.Load() > 0 })
	ob.mu.Lock()
	ob.fail = nil
	ob.mu.Unlock()
	waitFor(t, "outbox drained", func() bool { return ob.len() == 0 })
	cancel()
	<-done
	checkInOrder(t, streamMsgs(t, s), 5)
}

func TestEnsureStream(t *testing.T) {
	srv := natstest.Start(t)
	js, err := jetstream.New(srv.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	cfg := StreamConfig{Name: "CALLCENTER", Prefix: "callcenter", MaxAge: 24 * time.Hour, Dupes: 2 * time.Minute}
	if _, notes, err := EnsureStream(ctx, js, cfg); err != nil || len(notes) != 0 {
		t.Fatalf("create: notes %v err %v", notes, err)
	}
	if _, notes, err := EnsureStream(ctx, js, cfg); err != nil || len(notes) != 0 {
		t.Fatalf("again: notes %v err %v", notes, err)
	}
	cfg.MaxAge = time.Hour
	if _, notes, err := EnsureStream(ctx, js, cfg); err != nil || len(notes) != 1 {
		t.Fatalf("changed max age: want one note, got %v err %v", notes, err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.*"}}); err != nil {
		t.Fatal(err)
	}
	_, _, err = EnsureStream(ctx, js, StreamConfig{Name: "OTHER", Prefix: "callcenter"})
	if err == nil || !errors.Is(err, ErrStreamMismatch) {
		t.Fatalf("want ErrStreamMismatch, got %v", err)
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		f, prefix string
		want      bool
	}{
		{"callcenter.>", "callcenter", true},
		{">", "callcenter", true},
		{"*.>", "callcenter", true},
		{"callcenter.*", "callcenter", false},
		{"callcenter", "callcenter", false},
		{"callcenter.acme.>", "callcenter", false},
		{"other.>", "callcenter", false},
		{"a.>", "a.b", true},
		{"a.b.>", "a.b", true},
		{"a.*.>", "a.b", true},
	} {
		if got := covers(tc.f, tc.prefix); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.f, tc.prefix, got, tc.want)
		}
	}
}

func TestCompareStreamIDs(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"1-0", "1-0", 0}, {"1-1", "1-0", 1}, {"2-0", "10-0", -1}, {"10-5", "9-99", 1}} {
		if got := CompareStreamIDs(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareStreamIDs(%s,%s)=%d want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestRelayResumeDoesNotTrimForeignIDs(t *testing.T) {
	_, js, s := setup(t)
	ob := &memOutbox{}
	ob.add(10, 0)
	// The stream's last message names outbox id 1005-0 but another event (as after
	// Redis lost its data and reused ids): nothing may be trimmed unpublished.
	foreign := ob.recs[5]
	foreign.ID = "evt-from-before-the-wipe"
	if _, err := js.PublishMsg(t.Context(), message(foreign, "CALLCENTER")); err != nil {
		t.Fatal(err)
	}
	r := NewRelay(js, ob, relayCfg(), zerolog.Nop())
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats.Skipped.Load(); got != 0 {
		t.Fatalf("skipped %d, want 0", got)
	}
	if got := len(streamMsgs(t, s)); got != 11 {
		t.Fatalf("stream holds %d, want 11 (the foreign one and all 10)", got)
	}
}

// An entry missing from the stream ends what resume may trim, even when later
// entries are there: nothing is trimmed unpublished.
func TestRelayResumeStopsAtAGap(t *testing.T) {
	_, js, s := setup(t)
	ob := &memOutbox{}
	ob.add(10, 0)
	for i, rec := range ob.recs {
		if i == 5 || i > 7 { // 5 failed while 6 and 7 were stored
			continue
		}
		if _, err := js.PublishMsg(t.Context(), message(rec, "CALLCENTER")); err != nil {
			t.Fatal(err)
		}
	}
	r := NewRelay(js, ob, relayCfg(), zerolog.Nop())
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats.Skipped.Load(); got != 5 {
		t.Fatalf("skipped %d, want the 5 before the gap", got)
	}
	ids := map[string]bool{}
	for _, m := range streamMsgs(t, s) {
		ids[m.Header.Get(jetstream.MsgIDHeader)] = true
	}
	for i := range 10 {
		if !ids[fmt.Sprintf("evt-%d", i)] {
			t.Errorf("evt-%d never reached the stream", i)
		}
	}
}
