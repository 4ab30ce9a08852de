package poll

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
)

// maxSingleReads bounds the old open calls (or metrics) read one by one in a
// cycle; with more of them, the list window is stretched back to them instead (a
// page of up to 1000 calls costs what one single read does).
const maxSingleReads = 10

// pollCalls discovers new calls and refreshes open ones (DESIGN §4).
//
// One list window serves both: from the newest created_time seen less an overlap
// (late arrivals, recently ended calls) or the oldest open call, whichever is
// earlier, read at per_page=1000 so one request covers up to a thousand calls. A
// few open calls older than MaxWindow are read one by one (GET /calls/{id}) rather
// than stretching the window that far; calls that already ended wait only for their
// metric and are not read again; calls still open after GiveUpAfter are given up.
// The client's CallsSince takes care of the API's quirks: list order, lists that
// move while read, and a /calls that ignores by_time (field notes 2 and 3).
func (p *Poller) pollCalls(ctx context.Context) error {
	cur, err := p.store.Cursors(ctx)
	if err != nil {
		return fmt.Errorf("calls: read cursors: %w", err)
	}
	open, err := p.store.OpenCalls(ctx, 0)
	if err != nil {
		return fmt.Errorf("calls: open calls: %w", err)
	}
	now := p.now()
	highWater := parseTime(cur[cursorHighWater])
	pruned := parseTime(cur[cursorPruned])
	from := now.Add(-p.cfg.Backfill)
	if !highWater.IsZero() {
		from = highWater.Add(-p.cfg.CallsOverlap)
	}
	bt := p.newBatcher(ctx)
	if cur[cursorAnnounced] == "" { // the first read: history before it is not announced (history.go)
		bt.cursor(cursorAnnounced, from.Format(time.RFC3339Nano))
	}
	from, old, err := p.planOpen(ctx, bt, open, from, now)
	if err != nil {
		return err
	}
	sink := &callSink{p: p, bt: bt, pruned: pruned, seen: map[int64]bool{}}
	if err := p.listCalls(ctx, from, sink.add); err != nil {
		return err
	}
	for _, id := range old {
		c, err := p.api.GetCall(ctx, id)
		if callcenter.IsNotFound(err) {
			p.log.Warn().Int64("call_id", id).Msg("open call no longer in the API; it stays open until given up")
			continue
		}
		if err != nil {
			return fmt.Errorf("calls: get open call %d: %w", id, err)
		}
		if err := sink.add([]callcenter.Call{c}); err != nil {
			return err
		}
	}
	if sink.newest.After(highWater) {
		bt.cursor(cursorHighWater, sink.newest.Format(time.RFC3339Nano))
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("calls: %w", err)
	}
	if cur[CursorBackfill] != "" {
		return nil // a backfill is under way: it must find its calls again (history.go)
	}
	return p.prune(ctx, highWater, pruned)
}

// planOpen decides how the open calls created before from are refreshed: calls
// that ended (waiting for their metric only) are left alone; calls created more
// than GiveUpAfter ago are given up (moved out of the open set, with a warning: the
// API never showed them ending); of the rest, those within MaxWindow pull the
// window back to them, and older ones are read one by one when they are few, or
// pull the window back too when they are many. It returns the window's start and
// the calls to read one by one.
func (p *Poller) planOpen(ctx context.Context, bt *batcher, open []cursor.Tracked, from, now time.Time) (time.Time, []int64, error) {
	var before []cursor.Tracked
	for _, o := range open {
		if o.At.Before(from) {
			before = append(before, o)
		}
	}
	if len(before) == 0 {
		return from, nil, nil
	}
	ids := make([]string, len(before))
	for i, o := range before {
		ids[i] = o.ID
	}
	snaps, err := p.store.GetSnapshots(ctx, kindCall, ids)
	if err != nil {
		return from, nil, fmt.Errorf("calls: read open call snapshots: %w", err)
	}
	var old []cursor.Tracked
	for _, o := range before { // oldest first
		st, err := diff.CallStateOf(snaps[o.ID])
		switch {
		case o.At.Before(now.Add(-p.cfg.GiveUpAfter)):
			p.log.Warn().Str("call_id", o.ID).Time("created", o.At).Bool("ended", err == nil && st.Ended).
				Msg("giving up on a call still open (or without a final metric) long after it began")
			bt.b.Terminal = append(bt.b.Terminal, cursor.Tracked{ID: o.ID, At: now})
		case err == nil && st.Ended:
		case o.At.After(now.Add(-p.cfg.MaxWindow)):
			from = minTime(from, o.At)
		default:
			old = append(old, o)
		}
	}
	if len(old) > maxSingleReads {
		return minTime(from, old[0].At), nil, nil
	}
	single := make([]int64, len(old))
	for i, o := range old {
		single[i] = mustID(o.ID)
	}
	return from, single, nil
}

// listCalls hands every call created at or after from to each, a page at a time,
// each call once: the client reads the window completely whatever the list order,
// and falls back to reading pages when /calls ignores by_time.
func (p *Poller) listCalls(ctx context.Context, from time.Time, each func([]callcenter.Call) error) error {
	o := callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: p.cfg.PerPage},
		ByTime: callcenter.TimeWindow{From: from, To: p.windowEnd()}}
	if err := p.api.CallsSince(ctx, o, each); err != nil {
		return fmt.Errorf("calls: %w", err)
	}
	return nil
}

// callSink diffs calls as pages arrive, each call once per cycle (a call read one
// by one may also come in the list).
type callSink struct {
	p      *Poller
	bt     *batcher
	pruned time.Time
	seen   map[int64]bool
	newest time.Time // newest created_time among the calls
}

func (s *callSink) add(page []callcenter.Call) error {
	fresh := unseen(s.seen, page, func(c callcenter.Call) int64 { return c.ID })
	newest, err := s.p.diffCalls(s.bt.ctx, s.bt, fresh, s.pruned)
	if newest.After(s.newest) {
		s.newest = newest
	}
	return err
}

// unseen returns the records of page not in seen yet, and marks them seen.
func unseen[T any](seen map[int64]bool, page []T, id func(T) int64) []T {
	fresh := make([]T, 0, len(page))
	for _, it := range page {
		if !seen[id(it)] {
			seen[id(it)] = true
			fresh = append(fresh, it)
		}
	}
	return fresh
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// diffCalls diffs each call against its snapshot and queues the results. It returns
// the newest created_time among the calls.
func (p *Poller) diffCalls(ctx context.Context, bt *batcher, calls []callcenter.Call, pruned time.Time) (time.Time, error) {
	// Oldest first, whatever order the API listed them in: events then reach the
	// stream roughly in the order things happened.
	slices.SortStableFunc(calls, func(a, b callcenter.Call) int {
		if c := a.CreatedTime.Compare(b.CreatedTime); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	var newest time.Time
	for start := 0; start < len(calls); start += 1000 {
		chunk := calls[start:min(start+1000, len(calls))]
		ids := make([]string, len(chunk))
		for i, c := range chunk {
			ids[i] = strconv.FormatInt(c.ID, 10)
		}
		snaps, err := p.store.GetSnapshots(ctx, kindCall, ids)
		if err != nil {
			return newest, fmt.Errorf("calls: read snapshots: %w", err)
		}
		for i, c := range chunk {
			prev := snaps[ids[i]]
			if prev == nil && !pruned.IsZero() && c.CreatedTime.Before(pruned) {
				continue // seen and pruned long ago: not new
			}
			p.saw(c.UpdatedTime)
			if c.CreatedTime.After(newest) && plausible(c.CreatedTime) {
				newest = c.CreatedTime
			}
			r, err := diff.Call(p.scope, prev, c)
			if err != nil {
				p.log.Error().Err(err).Int64("call_id", c.ID).Msg("calls: diff failed; call skipped")
				continue
			}
			if !r.Changed {
				continue
			}
			if prev == nil {
				bt.b.Open = append(bt.b.Open, cursor.Tracked{ID: ids[i], At: c.CreatedTime})
			}
			if r.State.Ended && p.cfg.Intervals[ResMetrics] == 0 {
				// No metrics to wait for: the call is done.
				bt.b.Terminal = append(bt.b.Terminal, cursor.Tracked{ID: ids[i], At: r.State.EndedAt})
			}
			if err := bt.add(kindCall, ids[i], r.Snap, r.Events); err != nil {
				return newest, fmt.Errorf("calls: %w", err)
			}
		}
	}
	return newest, nil
}

// prune forgets calls that are done (ended, metric final) and older than anything
// a list window can return again, up to 1000 a cycle. The horizon only moves
// forward (a minute at least at a time) and is committed before pruning, so that a full read of /calls does not take a pruned call for a
// new one (diffCalls ignores unknown calls created before it).
func (p *Poller) prune(ctx context.Context, highWater, stored time.Time) error {
	if highWater.IsZero() {
		return nil
	}
	horizon := stored
	if h := highWater.Add(-p.cfg.CallsOverlap - p.cfg.MetricsLookback - time.Hour); h.Sub(stored) >= time.Minute {
		bt := p.newBatcher(ctx)
		bt.cursor(cursorPruned, h.Format(time.RFC3339Nano))
		if err := bt.flush(); err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		horizon = h
	}
	// Every cycle, a bounded step: calls finish after the horizon passed them.
	n, err := p.store.Prune(ctx, p.lease(), horizon, 1000)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	if n > 0 {
		p.log.Debug().Int("calls", n).Time("before", horizon).Msg("pruned finished calls")
	}
	return nil
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func mustID(s string) int64 {
	id, _ := strconv.ParseInt(s, 10, 64)
	return id
}
