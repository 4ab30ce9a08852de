package poll

import (
	"context"
	"errors"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/rs/zerolog"
)

// countingLeaser counts the attempts to acquire the lease.
type countingLeaser struct {
	Leaser
	acquires atomic.Int32
}

func (c *countingLeaser) Acquire(ctx context.Context, holder string, ttl time.Duration) (cursor.Lease, error) {
	c.acquires.Add(1)
	return c.Leaser.Acquire(ctx, holder, ttl)
}

// One replica leads, the other stands by; when the leader stops it releases the
// lease and the standby takes over at once, with a newer token. Work that
// reports a lost lease makes its replica stand by.
func TestLeadershipHandOver(t *testing.T) {
	store, err := cursor.New(redistest.Start(t).Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	var tokens [2]atomic.Int64
	work := func(i int, then error) Work {
		return func(ctx context.Context, lease func() cursor.Lease) error {
			tokens[i].Store(lease().Token)
			if then != nil {
				return then
			}
			<-ctx.Done()
			return ctx.Err()
		}
	}
	var changes atomic.Int32
	a := NewLeadership(store, "a", ttl, zerolog.Nop(), WithRoleObserver(func(context.Context, bool) { changes.Add(1) }))
	actx, stopA := context.WithCancel(t.Context())
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(actx, work(0, nil)) }()
	simtest.WaitFor(t, 5*time.Second, "a to lead", a.IsLeader)

	tries := &countingLeaser{Leaser: store}
	b := NewLeadership(tries, "b", ttl, zerolog.Nop())
	bctx, stopB := context.WithCancel(t.Context())
	defer stopB()
	bDone := make(chan error, 1)
	go func() { bDone <- b.Run(bctx, work(1, ErrLostLease)) }()
	simtest.WaitFor(t, 5*time.Second, "b to try twice", func() bool { return tries.acquires.Load() >= 2 })
	if b.IsLeader() || !a.IsLeader() {
		t.Fatalf("leaders: a %v, b %v; want a only", a.IsLeader(), b.IsLeader())
	}
	stopA()
	if err := <-aDone; !errors.Is(err, context.Canceled) {
		t.Errorf("a.Run: %v, want context.Canceled", err)
	}
	simtest.WaitFor(t, 5*time.Second, "b to take over", func() bool { return tokens[1].Load() != 0 })
	if tokens[1].Load() <= tokens[0].Load() {
		t.Errorf("b's token %d, want newer than a's %d", tokens[1].Load(), tokens[0].Load())
	}
	if a.IsLeader() || changes.Load() != 2 || a.Holder() != "a" {
		t.Errorf("a after stopping: leader %v, %d changes, holder %q", a.IsLeader(), changes.Load(), a.Holder())
	}
	stopB()
	if err := <-bDone; !errors.Is(err, context.Canceled) {
		t.Errorf("b.Run: %v, want context.Canceled", err)
	}
}

// With WithStandbyRetry a standby takes a released lease within its retry
// period, long before the lease would have expired.
func TestLeadershipStandbyRetry(t *testing.T) {
	store, err := cursor.New(redistest.Start(t).Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	const ttl = time.Minute
	held := func(ctx context.Context, _ func() cursor.Lease) error { <-ctx.Done(); return ctx.Err() }
	a := NewLeadership(store, "a", ttl, zerolog.Nop())
	actx, stopA := context.WithCancel(t.Context())
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(actx, held) }()
	simtest.WaitFor(t, 5*time.Second, "a to lead", a.IsLeader)

	tries := &countingLeaser{Leaser: store}
	b := NewLeadership(tries, "b", ttl, zerolog.Nop(), WithStandbyRetry(20*time.Millisecond))
	bctx, stopB := context.WithCancel(t.Context())
	bDone := make(chan error, 1)
	go func() { bDone <- b.Run(bctx, held) }()
	simtest.WaitFor(t, 5*time.Second, "b to try twice", func() bool { return tries.acquires.Load() >= 2 })
	stopA()
	<-aDone
	simtest.WaitFor(t, 10*time.Second, "b to take the released lease (TTL 1 min)", b.IsLeader)
	stopB()
	<-bDone
}
