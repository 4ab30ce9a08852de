package service

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/fleet"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// retiredDigest is the Digest under which the fleet lists a retired account:
// one the source no longer lists (its file removed or refused) whose outbox still
// holds events, or whose lease is still held while it is handed off. Its work is
// the drain (drainAccount), not polling; a change either way restarts the work.
const retiredDigest = "retired"

// How often retirees look: the retired accounts they know are read every
// retiredCheck (two commands each); the whole keyspace is scanned for outboxes
// (cursor.OutboxAccounts: SCAN) at start and every retiredRescan, which finds
// what was stranded before this process started.
const (
	retiredCheck  = 2 * time.Second
	retiredRescan = 5 * time.Minute
)

// retirees are the retired accounts of a fleet as this replica knows them: those
// it saw leave the source, and those a scan found with events in their outbox.
// An account stays retired until its outbox is empty and nobody holds its lease,
// or it is listed again. It is safe for concurrent use.
type retirees struct {
	rdb redis.UniversalClient
	src AccountSource
	log zerolog.Logger

	mu         sync.Mutex
	configured map[string]bool // as of the last accounts call: who leaves
	waiting    map[string]bool // retired, not yet seen drained
}

func newRetirees(rdb redis.UniversalClient, src AccountSource, log zerolog.Logger) *retirees {
	return &retirees{rdb: rdb, src: src, log: log, configured: map[string]bool{}, waiting: map[string]bool{}}
}

// accounts is fleet.Run's accounts: the source's, and the retired ones under
// retiredDigest. An account that left the source since the last call is retired
// at once, so its work turns from polling to draining without a gap.
func (r *retirees) accounts() []fleet.Account {
	listed := r.src.Accounts()
	now := make(map[string]bool, len(listed))
	for _, a := range listed {
		now[a.Name] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.configured {
		if !now[name] && !r.waiting[name] {
			r.waiting[name] = true
			r.log.Info().Str("account", name).Msg("fleet: account no longer configured; its outbox is drained before its work ends")
		}
	}
	r.configured = now
	for _, name := range slices.Sorted(maps.Keys(r.waiting)) {
		if !now[name] {
			listed = append(listed, fleet.Account{Name: name, Digest: retiredDigest})
		}
	}
	return listed
}

// draining lists the retired accounts known here, sorted.
func (r *retirees) draining() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.waiting))
}

// run keeps the retired accounts current until ctx ends.
func (r *retirees) run(ctx context.Context) {
	check := time.NewTicker(retiredCheck)
	defer check.Stop()
	var scanned time.Time
	for {
		if time.Since(scanned) >= retiredRescan {
			if err := r.scan(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				r.log.Warn().Err(err).Msg("fleet: cannot list the accounts with an outbox in Redis; trying again")
			} else {
				scanned = time.Now()
			}
		}
		r.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-check.C:
		}
	}
}

// scan retires the accounts the source does not list whose outbox holds events.
func (r *retirees) scan(ctx context.Context) error {
	names, err := cursor.OutboxAccounts(ctx, r.rdb)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, a := range r.src.Accounts() {
		listed[a.Name] = true
	}
	for _, name := range names {
		if listed[name] {
			continue
		}
		n, _, err := r.state(ctx, name)
		if err != nil || n == 0 {
			continue // read again at the next scan
		}
		r.mu.Lock()
		if !r.waiting[name] {
			r.waiting[name] = true
			r.log.Warn().Str("account", name).Int64("outbox", n).Msg("fleet: found the outbox of an account no longer configured; draining it")
		}
		r.mu.Unlock()
	}
	return nil
}

// check forgets the retired accounts listed again, and those drained: outbox
// empty and lease free (its last owner, or its drain, has released it).
func (r *retirees) check(ctx context.Context) {
	listed := map[string]bool{}
	for _, a := range r.src.Accounts() {
		listed[a.Name] = true
	}
	for _, name := range r.draining() {
		done := listed[name]
		if !done {
			n, holder, err := r.state(ctx, name)
			done = err == nil && n == 0 && holder == ""
		}
		if done {
			r.mu.Lock()
			delete(r.waiting, name)
			r.mu.Unlock()
		}
	}
}

// state reads an account's outbox length and lease holder.
func (r *retirees) state(ctx context.Context, name string) (outbox int64, holder string, err error) {
	store, err := cursor.New(r.rdb, name)
	if err != nil {
		return 0, "", err
	}
	ctx = telemetry.ContextWithAccount(ctx, name)
	if outbox, err = store.OutboxLen(ctx); err != nil {
		return 0, "", err
	}
	holder, _, _, err = store.Leader(ctx)
	return outbox, holder, err
}
