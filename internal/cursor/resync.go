package cursor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A resync (`poller resync`) is asked of the account's leader through Redis: the
// command queues a request and reads its progress; the leader's poller takes it
// between two poll cycles and re-announces the entities through its fenced
// commits. Keys, beside the account's others (so Forget removes them):
//
//	resync:queue       list of run ids waiting for the leader
//	resync:running     list of the run id the leader took (one at most): a leader
//	                   that dies while resyncing leaves it there, and the next
//	                   leader resumes it under the same run id (same event ids)
//	resync:run:<id>    hash: the request and its progress; expires a day after
//	                   its last update
const resyncKeep = 24 * time.Hour

// ResyncRequest is what a resync re-announces.
type ResyncRequest struct {
	Run       string    // the run's id: part of every snapshot's event id
	Resources []string  // users, teams, calls, in this order of work
	Entity    string    // one entity ("calls/812", "users/8"), or "" for all
	Since     time.Time // calls created at or after it; zero: the poller's default window
}

// ResyncProgress is a run's state as the leader reports it.
type ResyncProgress struct {
	State    string // ResyncQueued, ResyncRunning, ResyncDone or ResyncFailed
	Holder   string // the leader running it
	Resource string // the resource under way
	Entities int    // entities re-announced so far
	Requests int    // API requests spent so far
	Error    string // why it failed
	Updated  time.Time
}

// The states of a run.
const (
	ResyncQueued  = "queued"
	ResyncRunning = "running"
	ResyncDone    = "done"
	ResyncFailed  = "failed"
)

func (k keys) resyncQueue() string         { return k.prefix + "resync:queue" }
func (k keys) resyncRunning() string       { return k.prefix + "resync:running" }
func (k keys) resyncRun(run string) string { return k.prefix + "resync:run:" + run }
func joinResources(rs []string) string     { return strings.Join(rs, ",") }
func splitResources(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}
func formatSince(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// RequestResync queues req for the account's leader. The run id must be new.
func (s *Store) RequestResync(ctx context.Context, req ResyncRequest) error {
	if req.Run == "" || len(req.Resources) == 0 {
		return errors.New("cursor resync: a run id and resources are required")
	}
	key := s.k.resyncRun(req.Run)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "resources", joinResources(req.Resources), "entity", req.Entity, "since", formatSince(req.Since),
			"state", ResyncQueued, "updated", time.Now().UTC().Format(time.RFC3339Nano))
		p.Expire(ctx, key, resyncKeep)
		p.RPush(ctx, s.k.resyncQueue(), req.Run)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cursor resync: queue run %s: %w", req.Run, err)
	}
	return nil
}

// WithdrawResync takes a run that no leader took yet off the queue. It reports
// false when the run is no longer queued (a leader took it).
func (s *Store) WithdrawResync(ctx context.Context, run string) (bool, error) {
	n, err := s.rdb.LRem(ctx, s.k.resyncQueue(), 0, run).Result()
	if err != nil {
		return false, fmt.Errorf("cursor resync: withdraw run %s: %w", run, err)
	}
	if n > 0 {
		s.rdb.Del(ctx, s.k.resyncRun(run))
	}
	return n > 0, nil
}

// TakeResync returns the run the leader is to work on: one a previous leader
// left unfinished, or else the next queued one (moved to the running list, so
// that a leader dying meanwhile leaves it to the next). ok is false when there
// is none.
func (s *Store) TakeResync(ctx context.Context) (req ResyncRequest, ok bool, err error) {
	run, err := s.rdb.LIndex(ctx, s.k.resyncRunning(), 0).Result()
	if errors.Is(err, redis.Nil) {
		run, err = s.rdb.LMove(ctx, s.k.resyncQueue(), s.k.resyncRunning(), "LEFT", "RIGHT").Result()
	}
	if errors.Is(err, redis.Nil) {
		return ResyncRequest{}, false, nil
	}
	if err != nil {
		return ResyncRequest{}, false, fmt.Errorf("cursor resync: take a run: %w", err)
	}
	h, err := s.rdb.HGetAll(ctx, s.k.resyncRun(run)).Result()
	if err != nil {
		return ResyncRequest{}, false, fmt.Errorf("cursor resync: read run %s: %w", run, err)
	}
	req = ResyncRequest{Run: run, Resources: splitResources(h["resources"]), Entity: h["entity"]}
	if h["since"] != "" {
		if req.Since, err = time.Parse(time.RFC3339Nano, h["since"]); err != nil {
			return req, true, fmt.Errorf("cursor resync: run %s: since %q: %w", run, h["since"], err)
		}
	}
	return req, true, nil
}

// ReportResync records a run's progress (and, with a final state, takes it off
// the running list).
func (s *Store) ReportResync(ctx context.Context, run string, p ResyncProgress) error {
	key := s.k.resyncRun(run)
	_, err := s.rdb.TxPipelined(ctx, func(pl redis.Pipeliner) error {
		pl.HSet(ctx, key, "state", p.State, "holder", p.Holder, "resource", p.Resource,
			"entities", p.Entities, "requests", p.Requests, "error", p.Error,
			"updated", time.Now().UTC().Format(time.RFC3339Nano))
		pl.Expire(ctx, key, resyncKeep)
		if p.State == ResyncDone || p.State == ResyncFailed {
			pl.LRem(ctx, s.k.resyncRunning(), 0, run)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cursor resync: report run %s: %w", run, err)
	}
	return nil
}

// ResyncStatus reads a run's progress; ok is false when Redis has no such run
// (never queued, withdrawn, or expired).
func (s *Store) ResyncStatus(ctx context.Context, run string) (p ResyncProgress, ok bool, err error) {
	h, err := s.rdb.HGetAll(ctx, s.k.resyncRun(run)).Result()
	if err != nil {
		return p, false, fmt.Errorf("cursor resync: read run %s: %w", run, err)
	}
	if len(h) == 0 {
		return p, false, nil
	}
	p = ResyncProgress{State: h["state"], Holder: h["holder"], Resource: h["resource"], Error: h["error"]}
	p.Entities, _ = strconv.Atoi(h["entities"])
	p.Requests, _ = strconv.Atoi(h["requests"])
	p.Updated, _ = time.Parse(time.RFC3339Nano, h["updated"])
	return p, true, nil
}
