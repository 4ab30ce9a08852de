package publish

import (
	"context"
	"encoding/json"
	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

func relayCfg() RelayConfig {
	return RelayConfig{Stream: "CALLCENTER", Filter: "callcenter.acme.>", Batch: 16, AckWait: 2 * time.Second, Idle: 10 * time.Millisecond}
}

func (b *bed) relay(opts ...RelayOption) *Relay {
	return NewRelay(b.js.Conn(), b.js, b.outbox(), relayCfg(), zerolog.Nop(), opts...)
}

// run runs r until the test ends.
func run(t *testing.T, r *Relay) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// publishDirect stores records in the stream as an earlier relay would have.
func (b *bed) publishDirect(t *testing.T, recs ...event.Committed) {
	t.Helper()
	for _, rec := range recs {
		msg, _ := new(outMsg).fill(rec, "CALLCENTER", rec.ID)
		if _, err := b.js.PublishMsg(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRelayPublishesInOrderWithHeaders(t *testing.T) {
	b := newBed(t, false)
	for range 4 { // several commits: order holds across them
		b.commit(t, 25)
	}
	var mu sync.Mutex
	var seen []event.Committed
	r := b.relay(WithPublishObserver(func(ps []Published) {
		mu.Lock()
		for _, p := range ps {
			seen = append(seen, p.Committed)
		}
		mu.Unlock()
	}))
	run(t, r)
	simtest.WaitFor(t, 20*time.Second, "outbox trimmed", func() bool { return b.outboxLen(t) == 0 })
	msgs := streamMsgs(t, b.stream)
	checkInOrder(t, msgs, 100)
	m := msgs[7]
	if m.Header.Get("Content-Type") != "application/cloudevents+json" || m.Header.Get(HeaderOutboxID) != b.ids[7] {
		t.Fatalf("headers %v, want the outbox id %s", m.Header, b.ids[7])
	}
	if v, ok := m.Header["traceparent"]; !ok || len(v) != 1 {
		t.Fatalf("lower-case traceparent header missing: %v", m.Header)
	}
	if string(m.Data) != `{"n":7}` || m.Subject != "callcenter.acme.call.created" {
		t.Fatalf("message 7: %s %s", m.Subject, m.Data)
	}
	if got := r.Stats.Published.Load(); got != 100 {
		t.Fatalf("published %d want 100", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 100 || seen[7].Type != events.CallCreated || seen[7].Time.Second() != 7 || seen[7].CommittedAt.IsZero() {
		t.Fatalf("OnPublished saw %d records; the 8th %+v, want its type, time and commit time", len(seen), seen[min(7, len(seen)-1)])
	}
}

func TestRelayReconcileSkipsPublishedAfterCrash(t *testing.T) {
	b := newBed(t, false)
	b.commit(t, 40)
	// A crash after the acks and before the trim: published, not trimmed. Reconcile
	// must skip entries 0..24 even when the duplicate window has passed.
	b.publishDirect(t, b.records(t)[:25]...)
	r := b.relay()
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkInOrder(t, streamMsgs(t, b.stream), 40)
	if got := r.Stats.Skipped.Load(); got != 25 {
		t.Fatalf("skipped %d want 25", got)
	}
	if got := r.Stats.Duplicates.Load(); got != 0 {
		t.Fatalf("duplicates %d want 0: reconcile should have skipped them", got)
	}
	if n := b.outboxLen(t); n != 0 {
		t.Fatalf("outbox holds %d after the drain, want 0", n)
	}
}

func TestRelaySurvivesNATSRestart(t *testing.T) {
	b := newBed(t, false)
	b.commit(t, 30)
	r := b.relay()
	run(t, r)
	simtest.WaitFor(t, 20*time.Second, "first batch", func() bool { return b.outboxLen(t) == 0 })
	b.nats.Restart(t)
	b.commit(t, 50)
	r.Wake()
	simtest.WaitFor(t, 20*time.Second, "outbox drained after restart", func() bool { return b.outboxLen(t) == 0 })
	checkInOrder(t, streamMsgs(t, b.stream), 80)
}

// While Redis is down the relay counts errors and keeps trying; the events wait
// in the (durable) outbox and go out in order once Redis is back.
func TestRelayRetriesOutboxErrors(t *testing.T) {
	b := newBed(t, true)
	b.commit(t, 5)
	b.redis.Stop()
	r := b.relay()
	run(t, r)
	simtest.WaitFor(t, 20*time.Second, "an error counted", func() bool { return r.Stats.Errors.Load() > 0 })
	b.redis.Restart(t)
	simtest.WaitFor(t, 20*time.Second, "outbox drained", func() bool { return b.outboxLen(t) == 0 })
	checkInOrder(t, streamMsgs(t, b.stream), 5)
}

func TestRelayReconcileDoesNotTrimForeignIDs(t *testing.T) {
	b := newBed(t, false)
	b.commit(t, 10)
	// The stream's last message names the outbox id of entry 5 but another event
	// (as after Redis lost its data and reused ids): nothing may be trimmed
	// unpublished.
	foreign := b.records(t)[5]
	foreign.ID = "evt-from-before-the-wipe"
	b.publishDirect(t, foreign)
	r := b.relay()
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats.Skipped.Load(); got != 0 {
		t.Fatalf("skipped %d, want 0", got)
	}
	if got := len(streamMsgs(t, b.stream)); got != 11 {
		t.Fatalf("stream holds %d, want 11 (the foreign one and all 10)", got)
	}
}

// An entry missing from the stream ends what reconcile may trim, and the entries
// stored ahead of it are withdrawn and published again after it, at once, under
// message ids of their own (the stream's duplicate window, 10 minutes here,
// remembers the withdrawn copies): the stream ends up in outbox order, each
// event once, long before the window has passed.
func TestRelayReconcileWithdrawsEntriesAheadOfAGap(t *testing.T) {
	b, _ := gapBed(t) // 5 failed while 6 and 7 were stored
	r := b.relay()
	run(t, r)
	simtest.WaitFor(t, 20*time.Second, "outbox drained, the duplicate window not waited for", func() bool { return b.outboxLen(t) == 0 })
	msgs := streamMsgs(t, b.stream)
	checkInOrder(t, msgs, 10)
	if got := r.Stats.Skipped.Load(); got != 5 {
		t.Fatalf("skipped %d, want the 5 before the gap", got)
	}
	if got := r.Stats.Withdrawn.Load(); got != 2 {
		t.Fatalf("withdrew %d, want the 2 stored ahead of the gap", got)
	}
	if got := msgs[6].Header.Get(jetstream.MsgIDHeader); got != "evt-6~r1" {
		t.Errorf("entry 6 published again under Nats-Msg-Id %q, want evt-6~r1", got)
	}
	if got := msgs[8].Header.Get(jetstream.MsgIDHeader); got != "evt-8" {
		t.Errorf("entry 8, never withdrawn, under Nats-Msg-Id %q, want its event id", got)
	}
}

// Entries an earlier release left in the outbox (no type and time stored next to
// the body) are published like any other, and their type and time still reach
// OnPublished.
func TestRelayPublishesEntriesOfEarlierReleases(t *testing.T) {
	b := newBed(t, false)
	env, err := event.New("acme", events.CallEnded, "calls/812", "k1", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), map[string]int{"id": 812})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(env)
	// The layout of cursor's doc: the outbox stream of the account, as written
	// before entries had type and time fields.
	if err := b.rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: "callbus:{" + b.store.Account() + "}:outbox",
		Values: []any{"id", env.ID, "subject", "callcenter.acme.call.ended", "data", body, "headers", "{}"}}).Err(); err != nil {
		t.Fatal(err)
	}
	var seen []event.Committed
	r := b.relay(WithPublishObserver(func(ps []Published) {
		for _, p := range ps {
			seen = append(seen, p.Committed)
		}
	}))
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	msgs := streamMsgs(t, b.stream)
	if len(msgs) != 1 || string(msgs[0].Data) != string(body) || msgs[0].Header.Get(jetstream.MsgIDHeader) != env.ID {
		t.Fatalf("stream holds %d messages, want the old entry as it was", len(msgs))
	}
	if len(seen) != 1 || seen[0].Type != events.CallEnded || !seen[0].Time.Equal(env.Time) {
		t.Fatalf("OnPublished saw %+v, want type and time from the body", seen)
	}
	if n := b.outboxLen(t); n != 0 {
		t.Fatalf("outbox holds %d after the drain, want 0", n)
	}
}

// A relay killed after it withdrew entries and before it published them again
// (a deploy, a hand-off, a failover) leaves their withdrawals in the store: the
// next relay, a process of its own, publishes them in their place at once. It
// never has anything stored ahead of an entry the stream lacks (it withdraws
// nothing), and waits for no duplicate window (10 minutes here).
func TestRelayKilledDuringAWithdrawalKeepsOrder(t *testing.T) {
	b, _ := gapBed(t) // 5 lost at a stream leader change; 6 and 7 stored
	first := b.relay()
	if err := first.reconcile(t.Context()); err != nil { // withdraws 6 and 7, then the process dies
		t.Fatal(err)
	}
	if got := first.Stats.Withdrawn.Load(); got != 2 {
		t.Fatalf("the first relay withdrew %d, want 2", got)
	}
	store, err := cursor.New(b.rdb, b.store.Account()) // the next process's
	if err != nil {
		t.Fatal(err)
	}
	next := NewRelay(b.js.Conn(), b.js, store, relayCfg(), zerolog.Nop())
	run(t, next)
	simtest.WaitFor(t, 20*time.Second, "outbox drained, the duplicate window not waited for", func() bool { return b.outboxLen(t) == 0 })
	checkInOrder(t, streamMsgs(t, b.stream), 10)
	if w, e := next.Stats.Withdrawn.Load(), next.Stats.Errors.Load(); w != 0 || e != 0 {
		t.Fatalf("the next relay withdrew %d after %d failed publishes, want none: it stored entries ahead of a missing one", w, e)
	}
}

// countingOutbox counts the relay's reads of the outbox.
type countingOutbox struct {
	Outbox
	reads int
}

func (o *countingOutbox) ReadOutbox(ctx context.Context, after string, count int) ([]event.Committed, error) {
	o.reads++
	return o.Outbox.ReadOutbox(ctx, after, count)
}

// Reconcile walks the outbox only up to the newest entry the stream holds: a
// long backlog the stream never saw is not read through on every reconcile.
func TestRelayReconcileStopsAtTheStreamsNewestEntry(t *testing.T) {
	b := newBed(t, false)
	b.commit(t, 100)
	b.publishDirect(t, b.records(t)[:5]...)
	ob := &countingOutbox{Outbox: b.outbox()}
	r := NewRelay(b.js.Conn(), b.js, ob, relayCfg(), zerolog.Nop())
	if err := r.reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats.Skipped.Load(); got != 5 {
		t.Errorf("skipped %d, want 5", got)
	}
	if ob.reads > 2 { // the head, then one batch holding entry 4
		t.Errorf("%d outbox reads for 5 entries in the stream, want 2: the walk went past the stream's newest entry", ob.reads)
	}
}

// streamLookups counts the reconciles of a relay (each looks the stream up).
type streamLookups struct {
	jetstream.StreamManager
	mu sync.Mutex
	n  int
}

func (s *streamLookups) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	return s.StreamManager.Stream(ctx, name)
}

func (s *streamLookups) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// A shutdown's drain goes on from where the relay's run stopped, without reading
// the stream back, when the run could vouch for it; it publishes what was
// committed after the run stopped.
func TestDrainGoesOnFromRun(t *testing.T) {
	b := newBed(t, false)
	b.commit(t, 40)
	lookups := &streamLookups{StreamManager: b.js}
	r := NewRelay(b.js.Conn(), lookups, b.outbox(), relayCfg(), zerolog.Nop())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	simtest.WaitFor(t, 20*time.Second, "outbox published", func() bool { return r.Stats.Published.Load() == 40 })
	cancel()
	<-done
	b.commit(t, 10) // after the run stopped
	before := lookups.count()
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if lookups.count() != before {
		t.Errorf("the drain reconciled (%d stream lookups): want it to go on from the run", lookups.count()-before)
	}
	checkInOrder(t, streamMsgs(t, b.stream), 50)
	if n := b.outboxLen(t); n != 0 {
		t.Errorf("%d entries left in the outbox after the drain", n)
	}
}
