package publish

import (
	"context"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// pausingTracer freezes the relay that uses it at its at-th publish span, in the
// middle of sending a batch, as SIGSTOP would, until resume is closed.
type pausingTracer struct {
	trace.Tracer
	n, at  int
	paused chan struct{}
	resume chan struct{}
}

func (p *pausingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if p.n++; p.n == p.at {
		close(p.paused)
		<-p.resume
	}
	return p.Tracer.Start(ctx, name, opts...)
}

// fence confirms lease as the service's wiring does.
func fence(store *cursor.Store, lease cursor.Lease) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) { return store.Holds(ctx, lease) }
}

// A leader frozen in the middle of a publish burst, past its lease and past the
// duplicate window, publishes nothing stale when it wakes: the new leader has
// published the rest, and the stream holds every event once, in order.
func TestRelayPausedLeaderPublishesNothingStale(t *testing.T) {
	b := newBed(t, false)
	const window = 200 * time.Millisecond
	b.updateStream(t, func(c *jetstream.StreamConfig) { c.Duplicates = window })
	b.commit(t, 40)
	if err := b.store.Release(t.Context(), b.lease); err != nil {
		t.Fatal(err)
	}
	leaseA, err := b.store.Acquire(t.Context(), "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pause := &pausingTracer{Tracer: noop.NewTracerProvider().Tracer(""), at: 5, paused: make(chan struct{}), resume: make(chan struct{})}
	a := b.relay(WithFence(fence(b.store, leaseA)), WithTracer(pause))
	run(t, a)
	<-pause.paused // four events of the first batch sent, twelve to go

	var leaseB cursor.Lease
	simtest.WaitFor(t, 20*time.Second, "a's lease to expire", func() bool {
		leaseB, err = b.store.Acquire(t.Context(), "b", time.Hour)
		return err == nil
	})
	bRelay := b.relay(WithFence(fence(b.store, leaseB)))
	run(t, bRelay)
	simtest.WaitFor(t, 20*time.Second, "b to drain the outbox", func() bool { return b.outboxLen(t) == 0 })
	drained := time.Now()
	simtest.WaitFor(t, 20*time.Second, "the duplicate window to pass", func() bool { return time.Since(drained) > 2*window })

	close(pause.resume)
	simtest.WaitFor(t, 20*time.Second, "a to settle its batch", func() bool { return a.Stats.Published.Load() == 4 })
	checkInOrder(t, streamMsgs(t, b.stream), 40)
	if got := bRelay.Stats.Skipped.Load(); got != 4 {
		t.Fatalf("b skipped %d, want the 4 a published before it froze", got)
	}
}

// A relay whose lease can no longer be confirmed publishes nothing: another
// replica may lead by now.
func TestRelayWithoutItsLeasePublishesNothing(t *testing.T) {
	b := newBed(t, false)
	b.commit(t, 5)
	if err := b.store.Release(t.Context(), b.lease); err != nil {
		t.Fatal(err)
	}
	r := b.relay(WithFence(fence(b.store, b.lease)))
	if err := r.Drain(t.Context()); err == nil {
		t.Error("Drain without the lease succeeded, want the fence's error")
	}
	if got := len(streamMsgs(t, b.stream)); got != 0 {
		t.Errorf("stream holds %d messages published without the lease, want 0", got)
	}
	if n := b.outboxLen(t); n != 5 {
		t.Errorf("outbox holds %d, want the 5 entries still waiting", n)
	}
}

// The lease's time counts from before the relay asked for it: a confirmation
// that took longer than the lease had left covers nothing, and the batch is not
// sent.
func TestRelayLeaseConfirmedTooLateSendsNothing(t *testing.T) {
	b := newBed(t, false)
	b.commit(t, 5)
	const ttl = 100 * time.Millisecond
	slow := func(ctx context.Context) (time.Duration, error) {
		select { // a Redis answering after the lease would have expired
		case <-time.After(2 * ttl):
			return ttl, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	r := b.relay(WithFence(slow))
	if err := r.reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, err := r.step(t.Context(), &flight{}); n != 0 || err != nil {
		t.Errorf("step = %d entries, %v; want none sent, no error", n, err)
	}
	if got := len(streamMsgs(t, b.stream)); got != 0 {
		t.Errorf("stream holds %d messages sent on a stale confirmation, want 0", got)
	}
}
