package publish

import (
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// bed is one relay test's real parts: a nats-server with the stream, and a
// redis-server with the store whose outbox the relay reads.
type bed struct {
	nats   *natstest.Server
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	redis  *redistest.Server
	rdb    *redis.Client
	store  *cursor.Store
	lease  cursor.Lease
	ids    []string // outbox stream id of each event committed, in order
}

// newBed starts both servers; durable Redis keeps its outbox across a restart.
func newBed(t testing.TB, durable bool) *bed {
	t.Helper()
	b := &bed{nats: natstest.Start(t)}
	b.setUp(t, b.nats.URL(), durable, 1)
	return b
}

// setUp connects to the NATS servers at urls, provisions the stream with replicas,
// starts Redis and takes the account's lease.
func (b *bed) setUp(t testing.TB, urls string, durable bool, replicas int) {
	t.Helper()
	if durable {
		b.redis = redistest.StartDurable(t)
	} else {
		b.redis = redistest.Start(t)
	}
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	b.nc = nc
	if b.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(64)); err != nil {
		t.Fatal(err)
	}
	if b.stream, _, err = EnsureStream(t.Context(), b.js, StreamConfig{Name: "CALLCENTER", Prefix: "callcenter", MaxAge: time.Hour, Dupes: 2 * time.Minute, Replicas: replicas}); err != nil {
		t.Fatal(err)
	}
	// A fresh account per test: tests sharing CALLBUS_TEST_REDIS_URL never meet.
	b.rdb = b.redis.Client(t)
	if b.store, err = cursor.New(b.rdb, "relay-"+rand.Text()[:10]); err != nil {
		t.Fatal(err)
	}
	if b.lease, err = b.store.Acquire(t.Context(), "relay-test", time.Hour); err != nil {
		t.Fatal(err)
	}
}

// commit appends n events (evt-<i>, numbered on from the last, with body
// {"n":<i>}) to the outbox in one commit, as the poller does.
func (b *bed) commit(t *testing.T, n int) {
	t.Helper()
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"n":%d}`, len(b.ids)+i))
	}
	b.commitBodies(t, bodies...)
}

// commitBodies appends an event (evt-<i>, numbered on from the last) with each
// body to the outbox in one commit.
func (b *bed) commitBodies(t testing.TB, bodies ...[]byte) {
	t.Helper()
	var batch cursor.Batch
	for k, body := range bodies {
		i := len(b.ids) + k
		batch.Events = append(batch.Events, event.Message{
			ID:      fmt.Sprintf("evt-%d", i),
			Subject: "callcenter.acme.call.created",
			Type:    events.CallCreated,
			Time:    time.Date(2026, 11, 24, 8, 0, i, 0, time.UTC),
			Data:    body,
			Headers: map[string]string{"traceparent": fmt.Sprintf("00-%032x-%016x-01", i+1, i+1)},
		})
	}
	res, err := b.store.Commit(t.Context(), b.lease, batch)
	if err != nil {
		t.Fatal(err)
	}
	b.ids = append(b.ids, res.StreamIDs...)
}

// updateStream changes the stream's configuration as an operator would.
func (b *bed) updateStream(t *testing.T, change func(*jetstream.StreamConfig)) {
	t.Helper()
	info, err := b.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	change(&cfg)
	if _, err := b.js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
}

// outbox is the relay's view of the store: the store itself.
func (b *bed) outbox() Outbox { return b.store }

// records reads the whole outbox as the relay sees it.
func (b *bed) records(t *testing.T) []event.Committed {
	t.Helper()
	recs, err := b.outbox().ReadOutbox(t.Context(), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// outboxLen is how many entries the relay has not trimmed yet.
func (b *bed) outboxLen(t testing.TB) int64 {
	t.Helper()
	n, err := b.store.OutboxLen(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
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
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // withdrawn
		}
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
		// An event published again after a withdrawal has a message id of its own.
		if got, want := event.MsgIDEvent(m.Header.Get(jetstream.MsgIDHeader)), fmt.Sprintf("evt-%d", i); got != want {
			t.Fatalf("message %d: Nats-Msg-Id %q, want event %q (order or loss)", i, m.Header.Get(jetstream.MsgIDHeader), want)
		}
	}
}

// The contract's header name is the one JetStream deduplicates by.
func TestHeaderIDIsJetStreamsMsgID(t *testing.T) {
	if events.HeaderID != jetstream.MsgIDHeader {
		t.Fatalf("events.HeaderID %q, JetStream's %q", events.HeaderID, jetstream.MsgIDHeader)
	}
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
