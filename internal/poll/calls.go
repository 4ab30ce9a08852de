package poll

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
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
// few open calls older than MaxWindow are read one by one (GET /calls/{id}), on a
// decaying schedule, rather than stretching the window that far; calls that ended
// are re-read for MetricsLookback after their end, for changes after the end;
// calls still open after GiveUpAfter, or lost by the API, are given up (planOpen).
// The client's CallsSince takes care of the API's quirks: list order, lists that
// move while read, and a /calls that ignores by_time (field notes 2 and 3).
//
// A call the client rejects (undecodable or insane, see callcenter.Rejection) is
// left out of the cycle and moves no cursor: the high water comes from the calls
// read. A new call is read again every cycle while its created_time is within
// CallsOverlap of the newest call seen (30 minutes by default); a known open call
// for as long as it stays open (window or single reads, until GiveUpAfter). Once
// the API serves it correctly, its current state is announced.
func (p *Poller) pollCalls(ctx context.Context) error {
	start, err := p.store.ReadCallsCycle(ctx, kindParts)
	if err != nil {
		return fmt.Errorf("calls: read cursors and open calls: %w", err)
	}
	cur, open := start.Cursors, start.Open
	now := p.now()
	// Cursors stored ahead of the present (by an earlier release that followed a
	// lying record) are taken back to it: a prune horizon ahead would hide every
	// new call.
	highWater := minTime(parseTime(cur[cursorHighWater]), now)
	pruned := minTime(parseTime(cur[cursorPruned]), p.horizon(highWater))
	from := now.Add(-p.cfg.Backfill)
	if !highWater.IsZero() {
		from = highWater.Add(-p.cfg.CallsOverlap)
	}
	bt := p.newBatcher(ctx)
	if cur[cursorAnnounced] == "" { // the first read: history before it is not announced (history.go)
		bt.cursor(cursorAnnounced, from.Format(time.RFC3339Nano))
	}
	if start.Stored {
		if err := p.resumeParts(ctx, bt); err != nil {
			return err
		}
	}
	from, old, err := p.planOpen(ctx, bt, open, from, now)
	if err != nil {
		return err
	}
	sink := &callSink{p: p, bt: bt, pruned: pruned, seen: watch(old)}
	pages := startOverlap(sink.add)
	err = p.listCalls(ctx, from, pages.add)
	if werr := pages.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if err := p.readOpen(ctx, sink, old); err != nil {
		return err
	}
	if sink.newest.After(highWater) {
		bt.cursor(cursorHighWater, sink.newest.Format(time.RFC3339Nano))
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("calls: %w", err)
	}
	p.reads.lastCalls = now
	if cur[CursorBackfill] != "" {
		return nil // a backfill is under way: it must find its calls again (history.go)
	}
	return p.prune(ctx, highWater, pruned)
}

// listCalls hands every call created at or after from to each, a page at a time,
// each call once: the client reads the window completely whatever the list order,
// and falls back to reading pages when /calls ignores by_time.
func (p *Poller) listCalls(ctx context.Context, from time.Time, each func([]events.Call) error) error {
	o := callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: p.cfg.PerPage},
		ByTime: callcenter.TimeWindow{From: from, To: p.windowEnd()}}
	if err := p.api.CallsSince(ctx, o, each); err != nil {
		return fmt.Errorf("calls: %w", err)
	}
	return nil
}

// callSink diffs calls as pages arrive, each call once per cycle: the client
// hands each call of the list once, and a call read one by one may also come in
// the list (seen).
type callSink struct {
	p      *Poller
	bt     *batcher
	pruned time.Time
	seen   map[int64]bool // the calls read one by one: whether the cycle had them
	newest time.Time      // newest created_time among the calls
}

func (s *callSink) add(page []events.Call) error {
	fresh := unseen(s.seen, page, func(c events.Call) int64 { return c.ID })
	newest, err := s.p.diffCalls(s.bt.ctx, s.bt, fresh, s.pruned)
	if newest.After(s.newest) {
		s.newest = newest
	}
	return err
}

// watch returns the seen map of the records read one by one after a list (see
// unseen): memory holds them, not the list's (a backlog lists 100,000 calls).
func watch(ids []int64) map[int64]bool {
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		seen[id] = false
	}
	return seen
}

// unseen returns the records of page not seen yet, and marks them seen: only
// records watched in seen can have been (the client hands each record of a list
// once); the others are all new. A page with nothing seen (always, when nothing
// is watched: a backlog) is returned as it is, not copied.
func unseen[T any](seen map[int64]bool, page []T, id func(T) int64) []T {
	if len(seen) == 0 {
		return page
	}
	fresh, copied := page, false
	for i, it := range page {
		done, watched := seen[id(it)]
		if done {
			if !copied {
				fresh, copied = append(make([]T, 0, len(page)), page[:i]...), true
			}
			continue
		}
		if watched {
			seen[id(it)] = true
		}
		if copied {
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
func (p *Poller) diffCalls(ctx context.Context, bt *batcher, calls []events.Call, pruned time.Time) (time.Time, error) {
	// Oldest first, whatever order the API listed them in: events then reach the
	// stream roughly in the order things happened.
	oldestFirst(calls)
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
			created, err := p.diffCall(bt, ids[i], snaps[ids[i]], c, pruned)
			if err != nil {
				return newest, err
			}
			newest = maxTime(newest, created)
		}
	}
	return newest, nil
}

// diffCall diffs one call against its snapshot prev and queues the result. It
// returns the call's created_time as it counts for the high water: never past the
// poller's present (a call dated ahead would hide every call created in between),
// zero when it does not count.
func (p *Poller) diffCall(bt *batcher, id string, prev []byte, c events.Call, pruned time.Time) (time.Time, error) {
	p.saw(c.ID, c.UpdatedTime)
	now := p.now()
	created := minTime(c.CreatedTime, now)
	// A call without created_time counts from its updated_time here: unknown
	// and last updated before the prune horizon, it was pruned (a read without
	// by_time lists it again), not new.
	since := orTime(created, minTime(c.UpdatedTime, now))
	if prev == nil && orTime(since, now).Before(pruned) {
		return time.Time{}, nil // seen and pruned long ago: not new
	}
	r, err := bt.diffs.Call(p.scope, prev, c, now) // its events are encoded by bt.add before the next diff
	if err != nil {
		p.log.Error().Err(err).Int64("call_id", c.ID).Msg("calls: diff failed; call skipped")
		return created, nil
	}
	again, err := p.reannounce(events.CallSnapshot, "calls/"+id, now, func(r events.Resync) any {
		return &events.CallSnapshotData{Call: c, Resync: r}
	})
	if err != nil {
		return created, err
	}
	if !r.Changed && again == nil {
		return created, nil
	}
	// A resync's snapshot follows the changes it found, in the same commit.
	w := write{kind: kindCall, id: id, events: append(r.Events, again...), call: c}
	if r.Changed {
		// Diffed against no snapshot: none is stored, as this leader's earlier
		// commits are in (batcher) and no one else writes.
		w.snap, w.fresh = r.Snap, prev == nil
		if prev == nil {
			// Tracked as created when first seen if its created_time is null or
			// ahead of the poller: that time decides its windows and its give-up.
			w.open = &cursor.Tracked{ID: id, At: orTime(created, now)}
		}
		if p.settled(r.State, now) && p.cfg.Intervals[ResMetrics] == 0 {
			// No metrics to wait for and past its changes after the end: done.
			w.terminal = &cursor.Tracked{ID: id, At: r.State.EndedAt}
		}
	}
	if err := bt.add(w); err != nil {
		return created, fmt.Errorf("calls: %w", err)
	}
	return created, nil
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
	if h := p.horizon(highWater); h.Sub(stored) >= time.Minute {
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

// horizon is the prune horizon for a high water: before it, nothing a list window
// can return again.
func (p *Poller) horizon(highWater time.Time) time.Time {
	if highWater.IsZero() {
		return time.Time{}
	}
	return highWater.Add(-p.cfg.CallsOverlap - p.cfg.MetricsLookback - time.Hour)
}

func orTime(t, otherwise time.Time) time.Time {
	if t.IsZero() {
		return otherwise
	}
	return t
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
