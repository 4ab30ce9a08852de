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

// maxSingleReads bounds the calls (or metrics) read one by one in a cycle.
const maxSingleReads = 50

// pollCalls discovers new calls and refreshes open ones (DESIGN §4).
//
// One list window serves both: from the newest created_time seen (less an overlap
// for late arrivals) or the oldest open call, whichever is earlier, read at
// per_page=1000, so one request covers up to a thousand calls; open calls older than
// MaxWindow are read one by one instead (GET /calls/{id}), a few per cycle. Whether
// /calls honours by_time is checked on every page (field note 3): a record outside
// the window means it does not, and the poller then reads every page and filters
// itself. Nothing depends on list order.
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
	var old []int64 // open calls too old for the window
	for _, o := range open {
		switch {
		case !o.At.Before(from):
		case o.At.After(now.Add(-p.cfg.MaxWindow)):
			from = o.At
		default:
			old = append(old, mustID(o.ID))
		}
	}
	calls, _, err := p.listCalls(ctx, from)
	if err != nil {
		return err
	}
	for i, id := range old {
		if i == maxSingleReads {
			break
		}
		c, err := p.api.GetCall(ctx, id)
		if callcenter.IsNotFound(err) {
			p.log.Warn().Int64("call_id", id).Msg("open call no longer in the API; it stays open")
			continue
		}
		if err != nil {
			return fmt.Errorf("calls: get open call %d: %w", id, err)
		}
		calls = append(calls, c)
	}
	bt := p.newBatcher(ctx)
	newest, err := p.diffCalls(ctx, bt, calls, pruned)
	if err != nil {
		return err
	}
	if newest.After(highWater) {
		bt.cursor(cursorHighWater, newest.Format(time.RFC3339Nano))
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("calls: %w", err)
	}
	return p.prune(ctx, highWater, pruned)
}

// listCalls reads every call created at or after from: through the by_time
// filter while /calls honours it (checked on every record), otherwise by reading
// pages and filtering here (readAll). It reports whether the filter held.
func (p *Poller) listCalls(ctx context.Context, from time.Time) ([]callcenter.Call, bool, error) {
	if time.Now().Before(p.byTimeIgnoredUntil) {
		calls, err := p.readAll(ctx, from)
		return calls, false, err
	}
	opts := callcenter.ListCallsOptions{
		ListOptions: callcenter.ListOptions{PerPage: p.cfg.PerPage},
		ByTime:      callcenter.TimeWindow{From: from, To: p.windowEnd()},
	}
	var out []callcenter.Call
	for page, err := range p.api.CallsPages(ctx, opts) {
		if err != nil {
			return nil, false, fmt.Errorf("calls: list: %w", err)
		}
		for _, c := range page.Items {
			if c.CreatedTime.Before(from.Truncate(time.Second)) { // by_time is sent to the second
				// by_time was ignored: fall back, and look again in an hour.
				p.byTimeIgnoredUntil = time.Now().Add(time.Hour)
				p.log.Warn().Msg("calls: /calls ignores by_time; reading pages and filtering instead")
				calls, err := p.readAll(ctx, from)
				return calls, false, err
			}
			out = append(out, c)
		}
	}
	return dedupe(out), true, nil
}

// readAll reads /calls without a filter and keeps calls created at or after from.
// List order is undocumented (field note 2), so it is detected, never assumed:
// when every record so far came newest first, reading stops at the first page that
// reaches back before from; when they came oldest first, pages are read from the
// last one backwards until one starts before from; any other order, or an order
// that breaks midway, means reading every page.
func (p *Poller) readAll(ctx context.Context, from time.Time) ([]callcenter.Call, error) {
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
			if c.CreatedTime.After(newest) {
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
// a list window can return again. The horizon only moves forward and is committed
// before pruning, so that a full read of /calls does not take a pruned call for a
// new one (diffCalls ignores unknown calls created before it).
func (p *Poller) prune(ctx context.Context, highWater, stored time.Time) error {
	if highWater.IsZero() {
		return nil
	}
	horizon := highWater.Add(-p.cfg.CallsOverlap - p.cfg.MetricsLookback - time.Hour)
	if horizon.Sub(stored) < time.Minute {
		return nil
	}
	bt := p.newBatcher(ctx)
	bt.cursor(cursorPruned, horizon.Format(time.RFC3339Nano))
	if err := bt.flush(); err != nil {
		return fmt.Errorf("prune: %w", err)
	}
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
