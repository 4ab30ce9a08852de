package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"time"
)

// work is the goroutine running one account.
type work struct {
	digest   string
	cancel   context.CancelFunc
	done     chan struct{} // closed when the work returned; err is set before
	err      error
	started  time.Time
	stopping bool // cancelled: being handed off or restarted
}

// retry delays the next start of an account whose work returned on its own.
type retry struct {
	failures  int
	notBefore time.Time
}

// leaveTimeout bounds the removal of the membership at the end of Run.
const leaveTimeout = 5 * time.Second

// Run joins the fleet, heartbeats, and for every account of accounts() that
// the assignment (Owner, or Assign WithHolders) gives this replica runs
// work(ctx, account) in a goroutine of its own, never two at once for one account. The work's ctx is cancelled when the
// account moves to another member, disappears from accounts(), or its Digest
// changes (work then starts again, with the new settings, once it returned). work
// must return after its graceful hand-off (stop polling, drain, release the
// lease). A work that returns on its own (an error, logged) or panics (recovered,
// logged) while the account is still this replica's runs again after a delay
// growing from 1 s to 30 s.
//
// accounts is called at every check (WithCheckInterval) and must be quick. While
// Redis cannot be reached Run keeps the accounts it runs (their leases fence their
// writes) and logs; it never returns for that. When ctx ends, Run cancels every
// work, waits for all of them to return, removes this replica's membership (so
// the others take its accounts at once rather than after the TTL) and returns nil.
// It returns an error only when called a second time.
func (f *Fleet) Run(ctx context.Context, accounts func() []Account, work func(ctx context.Context, account string) error) error {
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		return errors.New("fleet: Run called twice")
	}
	f.running = true
	f.mu.Unlock()

	l := &loop{f: f, accounts: accounts, work: work, wake: make(chan struct{}, 1), retries: map[string]*retry{}}
	l.refresh(ctx, false)
	l.reconcile(ctx)
	t := time.NewTicker(f.check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.shutdown(ctx)
			return nil
		case <-t.C:
			l.refresh(ctx, false)
		case <-l.wake: // a work returned: restart or forget it now
		}
		l.reconcile(ctx)
	}
}

// loop is Run's state, touched by Run's goroutine only (works by the works'
// goroutines too, under f.mu).
type loop struct {
	f        *Fleet
	accounts func() []Account
	work     func(context.Context, string) error
	wake     chan struct{}
	retries  map[string]*retry

	lastBeat    time.Time          // of the last heartbeat Redis accepted
	unreachable bool               // the last call to Redis failed
	lastFailLog time.Time          // when a failure was last logged
	lastHeldLog time.Time          // when a failure to read the holders was last logged
	lastHeld    map[string]string  // the holders last read (WithHolders)
	arrived     map[string]arrival // when each account's replica took it, as last read
	unrecorded  bool               // this replica holds an account whose arrival is not recorded as its own
}

// reconcile stops the works this replica should no longer run and starts the
// ones it should, from the accounts listed now and the members last read, then
// records the arrival of the accounts it took since.
func (l *loop) reconcile(ctx context.Context) {
	l.reconcileWorks(ctx)
	if l.unrecorded {
		// At once, not at the next heartbeat: Assign gives up the accounts a
		// member took last first, and counts an unrecorded one as taken last.
		l.unrecorded = false
		l.refresh(ctx, true)
	}
}

// reconcileWorks stops the works this replica should no longer run and starts
// the ones it should.
func (l *loop) reconcileWorks(ctx context.Context) {
	members := l.f.liveMembers()
	listed := map[string]string{}
	for _, a := range l.accounts() {
		listed[a.Name] = a.Digest
	}
	owners := make(map[string]string, len(listed))
	if l.f.holders != nil {
		held := l.held(ctx, listed)
		arrived := make(map[string]int64, len(held))
		for a, h := range held {
			if r, ok := l.arrived[a]; ok && r.replica == h {
				arrived[a] = r.at
			} else if h == l.f.replica {
				l.unrecorded = true
			}
		}
		owners = Assign(slices.Collect(maps.Keys(listed)), members, held, arrived)
	} else {
		names := make([]string, len(members))
		for i, m := range members {
			names[i] = m.Name
		}
		for name := range listed {
			owners[name] = Owner(name, names)
		}
	}
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	l.reap(func(name string) bool { _, ok := listed[name]; return ok && owners[name] == l.f.replica })
	for name, w := range l.f.works {
		digest, ok := listed[name]
		switch {
		case w.stopping:
		case !ok:
			l.stop(name, w, "no longer listed")
		case owners[name] != l.f.replica:
			l.stop(name, w, "moved to "+owners[name])
		case digest != w.digest:
			l.stop(name, w, "settings changed")
		}
	}
	for name, digest := range listed {
		if owners[name] != l.f.replica {
			delete(l.retries, name)
			continue
		}
		if _, busy := l.f.works[name]; busy {
			continue
		}
		if r := l.retries[name]; r != nil && time.Now().Before(r.notBefore) {
			continue
		}
		l.start(ctx, name, digest)
	}
}

// held reads the lease holders of the listed accounts; when that fails (Redis
// away) it returns the last ones read, so that nothing moves for it, and logs at
// most every failLogEvery.
func (l *loop) held(ctx context.Context, listed map[string]string) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, l.f.redisTimeout())
	defer cancel()
	h, err := l.f.holders(ctx, slices.Collect(maps.Keys(listed)))
	if err != nil {
		if time.Since(l.lastHeldLog) > failLogEvery {
			l.lastHeldLog = time.Now()
			l.f.log.Warn().Err(err).Msg("fleet: could not read the accounts' lease holders; keeping the last assignment's")
		}
		return l.lastHeld
	}
	l.lastHeld = h
	return h
}

// failLogEvery spaces the warnings of a lasting failure to read the holders.
const failLogEvery = 30 * time.Second

// stop cancels w's context; reap forgets it once it returned. Under f.mu.
func (l *loop) stop(name string, w *work, why string) {
	l.f.log.Info().Str("account", name).Str("reason", why).Msg("fleet: stopping the account's work")
	w.stopping = true
	w.cancel()
}

// start runs the work of name in a new goroutine. Under f.mu.
func (l *loop) start(ctx context.Context, name, digest string) {
	wctx, cancel := context.WithCancel(ctx)
	w := &work{digest: digest, cancel: cancel, done: make(chan struct{}), started: time.Now()}
	l.f.works[name] = w
	l.f.log.Info().Str("account", name).Str("digest", digest).Msg("fleet: starting the account's work")
	go func() {
		defer func() {
			if p := recover(); p != nil {
				w.err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
			cancel()
			close(w.done)
			select {
			case l.wake <- struct{}{}:
			default:
			}
		}()
		w.err = l.work(wctx, name)
	}()
}

// reap forgets the works that returned, and delays the restart of those that
// returned on their own while still wanted (this replica's, listed). Under f.mu.
func (l *loop) reap(wanted func(account string) bool) {
	for name, w := range l.f.works {
		select {
		case <-w.done:
		default:
			continue
		}
		delete(l.f.works, name)
		if w.stopping || !wanted(name) {
			l.f.log.Info().AnErr("error", w.err).Str("account", name).Msg("fleet: the account's work returned")
			continue
		}
		r := l.retries[name]
		if r == nil || time.Since(w.started) > maxRestartDelay {
			r = &retry{}
			l.retries[name] = r
		}
		delay := min(restartDelay<<r.failures, maxRestartDelay)
		r.failures = min(r.failures+1, 8)
		r.notBefore = time.Now().Add(delay)
		l.f.log.Error().Err(w.err).Str("account", name).Dur("restart_in_ms", delay).
			Msg("fleet: the account's work returned on its own; it runs again after a delay")
	}
}

// shutdown cancels every work, waits for all of them, and leaves the fleet.
func (l *loop) shutdown(ctx context.Context) {
	l.f.mu.Lock()
	var dones []chan struct{}
	for name, w := range l.f.works {
		if !w.stopping {
			l.stop(name, w, "shutting down")
		}
		dones = append(dones, w.done)
	}
	l.f.mu.Unlock()
	for _, d := range dones {
		<-d
	}
	l.f.mu.Lock()
	l.reap(func(string) bool { return false })
	l.f.mu.Unlock()
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	if err := l.f.leave(lctx); err != nil {
		l.f.log.Warn().Err(err).Dur("expires_in_ms", l.f.ttl).Msg("fleet: could not remove this replica's membership; it expires by itself")
		return
	}
	l.f.log.Info().Str("replica", l.f.replica).Msg("fleet: left")
}
