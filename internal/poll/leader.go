package poll

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/rs/zerolog"
)

// Leaser is what leadership needs of the store (cursor.Store).
type Leaser interface {
	Acquire(ctx context.Context, holder string, ttl time.Duration) (cursor.Lease, error)
	Renew(ctx context.Context, l cursor.Lease) error
	Release(ctx context.Context, l cursor.Lease) error
}

// Leadership runs work only while this replica holds the account's lease. Replicas
// that do not hold it stand by and try again every third of the TTL, so a standby
// takes over within about 1⅓ TTL of the leader's death. It is safe to read IsLeader
// from any goroutine.
type Leadership struct {
	leaser Leaser
	holder string
	ttl    time.Duration
	log    zerolog.Logger
	leader atomic.Bool
	// OnChange, when set, is called with the new role.
	OnChange func(leader bool)
}

// NewLeadership returns leadership for holder (unique per process: host name and
// process id, say) with a lease of ttl.
func NewLeadership(l Leaser, holder string, ttl time.Duration, log zerolog.Logger) *Leadership {
	return &Leadership{leaser: l, holder: holder, ttl: ttl, log: log}
}

// IsLeader reports whether this replica holds the lease now.
func (l *Leadership) IsLeader() bool { return l.leader.Load() }

// Holder is this replica's name in the lease.
func (l *Leadership) Holder() string { return l.holder }

// Run acquires the lease, runs work with it, renews it every TTL/3, and cancels
// work as soon as the lease is lost, or cannot be confirmed for two thirds of the
// TTL (Redis unreachable: the lease may expire and another replica take over; every
// commit is fenced anyway). When work returns on its own it is restarted after a
// pause unless ctx is done. On ctx's end it waits for work to return, releases the
// lease so a standby takes over at once, and returns ctx's error.
func (l *Leadership) Run(ctx context.Context, work func(ctx context.Context, lease func() cursor.Lease) error) error {
	every := l.ttl / 3
	for {
		lease, err := l.leaser.Acquire(ctx, l.holder, l.ttl)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if !errors.Is(err, cursor.ErrNotLeader) {
				l.log.Warn().Err(err).Msg("lease: cannot acquire")
			}
			if !pause(ctx, every) {
				return ctx.Err()
			}
			continue
		}
		l.lead(ctx, lease, every, work)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !pause(ctx, every) {
			return ctx.Err()
		}
	}
}

// lead runs work while lease holds.
func (l *Leadership) lead(ctx context.Context, lease cursor.Lease, every time.Duration, work func(context.Context, func() cursor.Lease) error) {
	l.set(true)
	l.log.Info().Int64("token", lease.Token).Msg("lease: leader")
	defer l.set(false)
	var cur atomic.Pointer[cursor.Lease]
	cur.Store(&lease)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- work(wctx, func() cursor.Lease { return *cur.Load() }) }()
	tick := time.NewTicker(every)
	defer tick.Stop()
	confirmed := time.Now()
	for {
		select {
		case err := <-done:
			if errors.Is(err, ErrLostLease) {
				l.log.Warn().Msg("lease: lost (a commit was refused); standing by")
				return
			}
			if err != nil && ctx.Err() == nil {
				l.log.Error().Err(err).Msg("leader work failed")
			}
			l.release(ctx, lease)
			return
		case <-tick.C:
			// Renew even while ctx ends: work may still be draining the outbox on
			// shutdown, and the lease must hold until it is released.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), every)
			err := l.leaser.Renew(rctx, *cur.Load())
			cancel()
			switch {
			case err == nil:
				confirmed = time.Now()
			case errors.Is(err, cursor.ErrNotLeader):
				l.log.Warn().Msg("lease: lost to another replica; standing by")
				cancel()
				<-done
				return
			case time.Since(confirmed) > 2*l.ttl/3:
				l.log.Warn().Err(err).Msg("lease: cannot renew; stepping down")
				cancel()
				<-done
				return
			default:
				l.log.Warn().Err(err).Msg("lease: renew failed; retrying")
			}
		}
	}
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

func (l *Leadership) set(leader bool) {
	l.leader.Store(leader)
	if l.OnChange != nil {
		l.OnChange(leader)
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
