package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
)

// ErrNoLeader: no replica took a resync request within the wait; the request
// was withdrawn.
var ErrNoLeader = errors.New("no replica leads the account")

// NewResyncRun returns a new resync run id: distinct across runs, so the
// snapshots of two runs have distinct event ids.
func NewResyncRun() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Resync asks the account's leader to re-announce req (poller resync) and
// follows the run until it ends, calling progress with each new state. Only the
// leader runs it, through its fenced commits and its API client (its rate
// budget), between two poll cycles; a standby never takes a request. When no
// replica takes the request within wait, it is withdrawn and Resync returns
// ErrNoLeader, naming who holds the lease if anyone does. A run the leader
// reports failed returns its error. The leader keeps going when ctx ends; the
// run's progress stays in Redis for a day.
func Resync(ctx context.Context, s config.Settings, req cursor.ResyncRequest, wait time.Duration, progress func(cursor.ResyncProgress)) error {
	rdb, err := connectRedis(s)
	if err != nil {
		return err
	}
	defer rdb.Close()
	store, err := cursor.New(rdb, s.Account)
	if err != nil {
		return err
	}
	if err := store.RequestResync(ctx, req); err != nil {
		return err
	}
	queued := time.Now()
	var last cursor.ResyncProgress
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if ok, _ := store.WithdrawResync(context.WithoutCancel(ctx), req.Run); ok {
				return fmt.Errorf("resync %s withdrawn before a leader took it: %w", req.Run, ctx.Err())
			}
			return fmt.Errorf("resync %s: stopped following it; the leader goes on (%w)", req.Run, ctx.Err())
		case <-tick.C:
		}
		p, ok, err := store.ResyncStatus(ctx, req.Run)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("resync %s: its record is gone from Redis (removed or expired)", req.Run)
		}
		if p.State == cursor.ResyncQueued && time.Since(queued) > wait {
			if taken, err := store.WithdrawResync(ctx, req.Run); err != nil || taken {
				return noLeader(ctx, store, s.Account, wait, err)
			}
			continue // taken meanwhile
		}
		if p.State != last.State || p.Resource != last.Resource || p.Entities != last.Entities || p.Requests != last.Requests {
			progress(p)
			last = p
		}
		switch p.State {
		case cursor.ResyncDone:
			return nil
		case cursor.ResyncFailed:
			return fmt.Errorf("resync %s failed on %s: %s", req.Run, p.Holder, p.Error)
		}
	}
}

// noLeader is the error of a request no replica took.
func noLeader(ctx context.Context, store *cursor.Store, account string, wait time.Duration, err error) error {
	if err != nil {
		return err
	}
	holder, _, ttl, lerr := store.Leader(ctx)
	switch {
	case lerr != nil:
		return lerr
	case holder == "":
		return fmt.Errorf("account %s: %w (no process holds its lease): start `poller run` for it; the request was withdrawn after %s", account, ErrNoLeader, wait)
	default:
		return fmt.Errorf("account %s: %w: its lease is held by %s (%s left) but it took no request in %s; is it an older release, or stuck? The request was withdrawn", account, ErrNoLeader, holder, ttl.Round(time.Millisecond), wait)
	}
}
