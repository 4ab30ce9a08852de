package poll

import (
	"cmp"
	"context"
	"errors"
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
// Whether /calls honours by_time is checked on every record (field note 3): a
// record outside the window means it does not, and the poller then reads pages and
// filters itself. Nothing depends on list order (listWindow, readAll).
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

// listCalls hands every call created at or after from to each, a page at a time:
// through the by_time filter while /calls honours it (checked on every record),
// otherwise by reading pages and filtering here (readAll).
func (p *Poller) listCalls(ctx context.Context, from time.Time, each func([]callcenter.Call) error) error {
	if time.Now().Before(p.byTimeIgnoredUntil) {
		return p.readAll(ctx, from, each)
	}
	fetch := func(ctx context.Context, w callcenter.TimeWindow, n int) (callcenter.Page[callcenter.Call], error) {
		pg, err := p.api.ListCalls(ctx, callcenter.ListCallsOptions{
			ListOptions: callcenter.ListOptions{Page: n, PerPage: p.cfg.PerPage}, ByTime: w})
		if err != nil {
			return pg, fmt.Errorf("calls: list page %d: %w", n, err)
		}
		for _, c := range pg.Items {
			// by_time goes to the second: From rounded down, To up.
			if c.CreatedTime.Before(w.From.Truncate(time.Second)) || c.CreatedTime.After(w.To.Add(time.Second)) {
				return pg, errIgnoresByTime
			}
		}
		return pg, nil
	}
	err := listWindow(ctx, fetch, callcenter.TimeWindow{From: from, To: p.windowEnd()}, func(c callcenter.Call) int64 { return c.ID }, each)
	if errors.Is(err, errIgnoresByTime) {
		// by_time was ignored: fall back, and look again in an hour.
		p.byTimeIgnoredUntil = time.Now().Add(time.Hour)
		p.log.Warn().Msg("calls: /calls ignores by_time; reading pages and filtering instead")
		return p.readAll(ctx, from, each)
	}
	return err
}

// callSink diffs calls as pages arrive, each call once per cycle.
type callSink struct {
	p      *Poller
	bt     *batcher
	pruned time.Time
	seen   map[int64]bool
	newest time.Time // newest created_time among the calls
}

func (s *callSink) add(page []callcenter.Call) error {
	fresh := make([]callcenter.Call, 0, len(page))
	for _, c := range page {
		if !s.seen[c.ID] {
			s.seen[c.ID] = true
			fresh = append(fresh, c)
		}
	}
	newest, err := s.p.diffCalls(s.bt.ctx, s.bt, fresh, s.pruned)
	if newest.After(s.newest) {
		s.newest = newest
	}
	return err
}

// errIgnoresByTime: /calls returned a record outside the by_time window.
var errIgnoresByTime = errors.New("the API ignores by_time on /calls")

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// readAll reads /calls without a filter and hands on calls created at or after from.
// List order is undocumented (field note 2), so it is detected, never assumed:
// when every record so far came newest first, reading stops at the first page that
// reaches back before from; when they came oldest first, pages are read from the
// last one backwards until one starts before from; any other order, or an order
// that breaks midway, means reading every page.
func (p *Poller) readAll(ctx context.Context, from time.Time, each func([]callcenter.Call) error) error {
	calls, err := p.readAllCalls(ctx, from)
	if err != nil {
		return err
	}
	for start := 0; start < len(calls); start += p.cfg.PerPage {
		if err := each(calls[start:min(start+p.cfg.PerPage, len(calls))]); err != nil {
			return err
		}
	}
	return nil
}

// readAllCalls is readAll's reading: it keeps the calls in memory, since the order
// is only known once read (a fallback for an API that ignores by_time).
func (p *Poller) readAllCalls(ctx context.Context, from time.Time) ([]callcenter.Call, error) {
	list := func(n int) (callcenter.Page[callcenter.Call], error) {
		pg, err := p.api.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{Page: n, PerPage: p.cfg.PerPage}})
		if err != nil {
			return pg, fmt.Errorf("calls: list page %d: %w", n, err)
		}
		return pg, nil
	}
	first, err := list(1)
	if err != nil {
		return nil, err
	}
	var ord order
	ord.see(first.Items)
	all := first.Items
	last := lastPage(first)
	if ord.asc && !ord.desc && last > 1 {
		var nextFirst time.Time // first record of the page after the one being read
		for n := last; n > 1; n-- {
			pg, err := list(n)
			if err != nil {
				return nil, err
			}
			all = append(all, pg.Items...)
			if len(pg.Items) == 0 {
				continue
			}
			if !sortedAsc(pg.Items) || (!nextFirst.IsZero() && pg.Items[len(pg.Items)-1].CreatedTime.After(nextFirst)) {
				for m := n - 1; m > 1; m-- { // the order broke: read the rest too
					pg, err := list(m)
					if err != nil {
						return nil, err
					}
					all = append(all, pg.Items...)
				}
				break
			}
			nextFirst = pg.Items[0].CreatedTime
			if nextFirst.Before(from) {
				break
			}
		}
	} else if !first.IsLast() {
		for n := 2; ; n++ {
			if ord.desc && !ord.asc && len(all) > 0 && all[len(all)-1].CreatedTime.Before(from) {
				break
			}
			pg, err := list(n)
			if err != nil {
				return nil, err
			}
			ord.see(pg.Items)
			all = append(all, pg.Items...)
			if pg.IsLast() {
				break
			}
		}
	}
	// In no order at all, a list that reshuffles between requests can hide records
	// from one pass: read it again (twice at most) until every record was seen.
	if !ord.asc && !ord.desc && first.Meta != nil {
		ids := func() int { return distinct(all, func(c callcenter.Call) int64 { return c.ID }) }
		for pass := 0; pass < 2 && ids() < first.Meta.TotalCount; pass++ {
			for n := 1; ; n++ {
				pg, err := list(n)
				if err != nil {
					return nil, err
				}
				all = append(all, pg.Items...)
				if pg.IsLast() {
					break
				}
			}
		}
	}
	out := all[:0:0]
	for _, c := range all {
		if !c.CreatedTime.Before(from) {
			out = append(out, c)
		}
	}
	return dedupe(out), nil
}

// order tracks whether the records seen so far could be in ascending and/or
// descending created_time order.
type order struct {
	asc, desc, started bool
	prev               time.Time
}

func (o *order) see(cs []callcenter.Call) {
	for _, c := range cs {
		if !o.started {
			o.asc, o.desc, o.started = true, true, true
		} else {
			if c.CreatedTime.Before(o.prev) {
				o.asc = false
			}
			if c.CreatedTime.After(o.prev) {
				o.desc = false
			}
		}
		o.prev = c.CreatedTime
	}
}

func sortedAsc(cs []callcenter.Call) bool {
	var o order
	o.see(cs)
	return o.asc
}

func lastPage(pg callcenter.Page[callcenter.Call]) int {
	if pg.Meta == nil {
		return 0
	}
	return pg.Meta.TotalPages
}

// dedupe drops repeated calls (page boundaries repeat records when the list moves
// under the reader), keeping the last copy read, which is the freshest.
func dedupe(cs []callcenter.Call) []callcenter.Call {
	idx := make(map[int64]int, len(cs))
	out := cs[:0:0]
	for _, c := range cs {
		if i, ok := idx[c.ID]; ok {
			out[i] = c
			continue
		}
		idx[c.ID] = len(out)
		out = append(out, c)
	}
	return out
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
