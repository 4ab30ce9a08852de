package poll

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/rs/zerolog"
)

// Leaser is what leadership needs of the store (cursor.Store). Acquire reports a
// lease held by another holder as an error matching cursor.ErrNotLeader; when it
// is a *cursor.NotLeaderError its TTL tells how long that lease has left.
type Leaser interface {
	Acquire(ctx context.Context, holder string, ttl time.Duration) (cursor.Lease, error)
	Renew(ctx context.Context, l cursor.Lease) error
	Release(ctx context.Context, l cursor.Lease) error
}

// LeadershipOption adds an optional collaborator to a Leadership.
type LeadershipOption func(*Leadership)

// WithRoleObserver calls f with each change of role (true: leader), in order,
// from Run's goroutine or, when a renewal steps down, the renewal's. f must not
// block.
func WithRoleObserver(f func(ctx context.Context, leader bool)) LeadershipOption {
	return func(l *Leadership) { l.observers = append(l.observers, f) }
}

// WithStandbyRetry makes a standby try again at least every d, rather than only
// when the current lease expires: a fleet moving an account to this replica sees
// the old owner release the lease (graceful hand-off) within d instead of up to
// a TTL later. It costs one Acquire per d per account standing by.
func WithStandbyRetry(d time.Duration) LeadershipOption {
	return func(l *Leadership) { l.retry = d }
}

// Leadership runs work only while this replica holds the account's lease. A
// standby learns from the store how long the current lease has left and tries
// again just after it expires, so it takes over within the TTL of the leader's
// last renewal (see expiryMargin). It is safe to read IsLeader from any goroutine.
type Leadership struct {
	leaser    Leaser
	holder    string
	ttl       time.Duration
	log       zerolog.Logger
	leader    atomic.Bool
	observers []func(context.Context, bool)
	retry     time.Duration // WithStandbyRetry; 0: at the lease's expiry only
}

// NewLeadership returns leadership for holder (unique per process: host name and
// process id, say) with a lease of ttl.
func NewLeadership(l Leaser, holder string, ttl time.Duration, log zerolog.Logger, opts ...LeadershipOption) *Leadership {
	ld := &Leadership{leaser: l, holder: holder, ttl: ttl, log: log}
	for _, o := range opts {
		o(ld)
	}
	return ld
}

// IsLeader reports whether this replica holds the lease now.
func (l *Leadership) IsLeader() bool { return l.leader.Load() }

// Holder is this replica's name in the lease.
func (l *Leadership) Holder() string { return l.holder }

// Work is what a leader runs: until ctx ends, every write fenced by lease(), the
// lease currently held.
type Work func(ctx context.Context, lease func() cursor.Lease) error

// expiryMargin is how long after the lease's announced expiry a standby tries
// again: Redis reports the remaining time in whole milliseconds, and a try a hair
// early only costs another wait.
const expiryMargin = 5 * time.Millisecond

// Run acquires the lease, runs work with it, renews it every TTL/3, and cancels
// work as soon as the lease is lost, or cannot be confirmed for two thirds of the
// TTL (Redis unreachable: the lease may expire and another replica take over; every
// commit is fenced anyway); the role turns to standby at that moment, not when work
// returns. When work returns on its own it is restarted after a pause unless ctx
// is done. On ctx's end it waits for work to return, releases the lease so a
// standby takes over at once, and returns ctx's error.
func (l *Leadership) Run(ctx context.Context, work Work) error {
	for {
		lease, err := l.leaser.Acquire(ctx, l.holder, l.ttl)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := l.ttl / 3
		if err == nil {
			if l.lead(ctx, lease, work) {
				wait = 0 // lost the lease: wait for the new holder's, below
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		} else if held := (*cursor.NotLeaderError)(nil); errors.As(err, &held) && held.TTL > 0 {
			wait = min(held.TTL+expiryMargin, l.ttl+expiryMargin)
		} else if !errors.Is(err, cursor.ErrNotLeader) {
			l.log.Warn().Err(err).Msg("lease: cannot acquire")
		}
		if l.retry > 0 {
			wait = min(wait, l.retry)
		}
		if !pause(ctx, wait) {
			return ctx.Err()
		}
	}
}

// lead runs work while lease holds; lost reports that the lease went to another
// replica or could not be kept (rather than work returning on its own). work
// runs in the caller's goroutine and the renewals in a timer's (renewal): a
// replica of thousands of accounts keeps no goroutine parked per account for
// the renewals, only one while a renewal is on its way to Redis.
func (l *Leadership) lead(ctx context.Context, lease cursor.Lease, work Work) (lost bool) {
	l.set(ctx, true)
	l.log.Info().Int64("token", lease.Token).Msg("lease: leader")
	defer l.set(ctx, false)
	wctx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	rn := l.renew(ctx, lease, stopWork)
	defer rn.stop() // also when work panics: no renewal outlives the term
	err := work(wctx, func() cursor.Lease { return lease })
	if rn.stop() {
		return true // the renewal stepped down: work returned for it
	}
	if errors.Is(err, ErrLostLease) {
		l.log.Warn().Msg("lease: lost (a commit was refused); standing by")
		return true
	}
	if err != nil && ctx.Err() == nil {
		l.log.Error().Err(err).Msg("leader work failed")
	}
	l.release(ctx, lease)
	return false
}

// renewal renews one term's lease every TTL/3 from a timer's goroutine until
// stopped or until it steps down.
type renewal struct {
	l        *Leadership
	ctx      context.Context
	lease    cursor.Lease
	stopWork context.CancelFunc
	every    time.Duration
	timer    *time.Timer

	mu sync.Mutex // held by a renewal while it runs: stop waits for it
	// confirmed is when the last successful renewal (or the acquire) was sent:
	// the lease lasts at least a TTL from then.
	confirmed time.Time
	next      time.Time // when the next renewal is due
	stopped   bool
	lost      bool // stepped down: the lease was lost or could not be kept
}

// renew starts the renewals of lease; stopWork ends the term's work when the
// leader steps down.
func (l *Leadership) renew(ctx context.Context, lease cursor.Lease, stopWork context.CancelFunc) *renewal {
	now := time.Now()
	rn := &renewal{l: l, ctx: ctx, lease: lease, stopWork: stopWork, every: l.ttl / 3, confirmed: now}
	rn.next = now.Add(rn.every)
	rn.mu.Lock() // a first renewal due at once waits for rn.timer
	rn.timer = time.AfterFunc(rn.every, rn.run)
	rn.mu.Unlock()
	return rn
}

// stop ends the renewals, waiting for one under way, and reports whether they
// stepped down.
func (rn *renewal) stop() (lost bool) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	rn.stopped = true
	rn.timer.Stop()
	return rn.lost
}

// run is one renewal. A renewal that failed past 2/3 of the TTL makes the
// leader step down; no renewal may end later than 5/6 of it, so the step-down
// comes before the lease can expire even when Redis hangs.
func (rn *renewal) run() {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.stopped {
		return
	}
	l := rn.l
	// Renew even while ctx ends: work may still be draining the outbox on
	// shutdown, and the lease must hold until it is released. A renewal that
	// hangs (Redis stopped answering) ends by lastTry whatever the client's own
	// timeouts and retries, so the leader steps down then.
	sent := time.Now()
	vouched := rn.confirmed.Add(2 * l.ttl / 3)
	lastTry := rn.confirmed.Add(5 * l.ttl / 6)
	deadline := sent.Add(rn.every)
	if lastTry.Before(deadline) {
		deadline = lastTry
	}
	rctx, stopRenew := context.WithDeadline(context.WithoutCancel(rn.ctx), deadline)
	err := l.leaser.Renew(rctx, rn.lease)
	stopRenew()
	switch {
	case err == nil:
		rn.confirmed = sent
	case errors.Is(err, cursor.ErrNotLeader):
		rn.stepDown("lease: lost to another replica; standing by", nil)
		return
	case !time.Now().Before(vouched):
		rn.stepDown("lease: cannot renew; stepping down", err)
		return
	default:
		l.log.Warn().Err(err).Msg("lease: renew failed; retrying")
	}
	// Every TTL/3 as a ticker would: a renewal that took long is not followed
	// by a longer gap.
	rn.next = rn.next.Add(rn.every)
	if now := time.Now(); rn.next.Before(now) {
		rn.next = now
	}
	rn.timer.Reset(time.Until(rn.next))
}

// stepDown turns the role to standby at once (work may take a while to return)
// and ends the term's work. Under rn.mu.
func (rn *renewal) stepDown(msg string, err error) {
	rn.l.log.Warn().Err(err).Msg(msg)
	rn.lost = true
	rn.l.set(rn.ctx, false)
	rn.stopWork()
}

// release gives the lease up, even while ctx is ending (shutdown), so a standby
// takes over at once instead of after the TTL.
func (l *Leadership) release(ctx context.Context, lease cursor.Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := l.leaser.Release(ctx, lease); err != nil {
		l.log.Warn().Err(err).Msg("lease: release failed; it expires on its own")
	}
}

// set records the role and tells the observers when it changed.
func (l *Leadership) set(ctx context.Context, leader bool) {
	if l.leader.Swap(leader) == leader {
		return
	}
	for _, f := range l.observers {
		f(ctx, leader)
	}
}

// pause waits d or until ctx ends; false when ctx ended.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
