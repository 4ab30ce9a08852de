package poll

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
)

// pollMetrics reads call metrics (with life_cycle) created within the look-back, or
// since the oldest ended call still waiting for its final metric if that is
// earlier, and finalizes them (metric.finalized once per call), then reports later
// changes (metric.updated). Calls not ended yet, or whose metric is final, do not
// stretch the window: there is nothing to finalize. A few calls older than
// MaxWindow that still wait are read one by one, on the decaying schedule from
// their end, instead of stretching the window back to them.
func (p *Poller) pollMetrics(ctx context.Context) error {
	open, err := p.store.OpenCalls(ctx, 0)
	if err != nil {
		return fmt.Errorf("metrics: open calls: %w", err)
	}
	now := p.now()
	from, old, err := p.planMetrics(ctx, open, now)
	if err != nil {
		return err
	}
	bt := p.newBatcher(ctx)
	seen := watch(old)
	each := func(page []events.CallMetric) error {
		return p.diffMetrics(ctx, bt, unseen(seen, page, func(m events.CallMetric) int64 { return m.CallID }))
	}
	o := callcenter.ListCallMetricsOptions{ListOptions: callcenter.ListOptions{PerPage: p.cfg.PerPage},
		ByTime: callcenter.TimeWindow{From: from, To: p.windowEnd()}, IncludeLifeCycle: true}
	pages := startOverlap(each) // diffed while the next page is read
	err = p.api.CallMetricsSince(ctx, o, pages.add)
	if werr := pages.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	for _, id := range old {
		if seen[id] {
			continue
		}
		m, err := p.api.GetCallMetric(ctx, id)
		if callcenter.IsNotFound(err) || errors.Is(err, callcenter.ErrMalformedResponse) {
			continue // gone, or unreadable for now (a bad record must not stall the resource)
		}
		if err != nil {
			return fmt.Errorf("metrics: get metric of call %d: %w", id, err)
		}
		if err := each([]events.CallMetric{m}); err != nil {
			return err
		}
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	p.reads.lastMetrics = now
	return nil
}

// planMetrics returns the start of the metrics window and the calls whose metric is
// read one by one (see pollMetrics).
func (p *Poller) planMetrics(ctx context.Context, open []cursor.Tracked, now time.Time) (time.Time, []int64, error) {
	from := now.Add(-p.cfg.MetricsLookback)
	before := createdBefore(open, from)
	if len(before) == 0 {
		return from, nil, nil
	}
	var old []cursor.Tracked
	err := p.eachTracked(ctx, before, func(o cursor.Tracked, s trackedState) error { // oldest first
		switch {
		case !s.known || !s.st.Ended || s.metricFinal:
		case o.At.After(now.Add(-p.cfg.MaxWindow)):
			from = minTime(from, o.At)
		case due(s.st.EndedAt, p.reads.lastMetrics, now) && len(old) <= maxSingleReads:
			// One past maxSingleReads tells singleOrWiden to widen from the oldest:
			// the rest need not be held (a backlog's tracked calls, 4 MB at 100,000).
			old = append(old, o)
		}
		return nil
	})
	if err != nil {
		return from, nil, fmt.Errorf("metrics: %w", err)
	}
	from, ids := singleOrWiden(from, old)
	return from, ids, nil
}

func (p *Poller) diffMetrics(ctx context.Context, bt *batcher, metrics []events.CallMetric) error {
	for start := 0; start < len(metrics); start += 1000 {
		chunk := metrics[start:min(start+1000, len(metrics))]
		ids := make([]string, len(chunk))
		for i, m := range chunk {
			ids[i] = strconv.FormatInt(m.CallID, 10)
		}
		calls, err := p.store.GetSnapshots(ctx, kindCall, ids)
		if err != nil {
			return fmt.Errorf("metrics: read call snapshots: %w", err)
		}
		prevs, err := p.store.GetSnapshots(ctx, kindMetric, ids)
		if err != nil {
			return fmt.Errorf("metrics: read snapshots: %w", err)
		}
		for i, m := range chunk {
			callSnap := calls[ids[i]]
			if callSnap == nil {
				continue // call not seen yet (or pruned): the calls poll comes first
			}
			st, err := diff.CallStateOf(callSnap)
			if err != nil {
				p.log.Error().Err(err).Int64("call_id", m.CallID).Msg("metrics: bad call snapshot; skipped")
				continue
			}
			p.saw(m.CallID, m.UpdatedTime)
			// A metric the API never updated after the end must not keep its call
			// open (and the metrics window stretched back to it) for ever.
			st.Overdue = st.Ended && p.now().Sub(st.EndedAt) > p.cfg.MetricsLookback
			prev := prevs[ids[i]]
			r, err := bt.diffs.Metric(p.scope, prev, m, st) // its events are encoded by bt.add before the next diff
			if err != nil {
				p.log.Error().Err(err).Int64("call_id", m.CallID).Msg("metrics: diff failed; skipped")
				continue
			}
			if !r.Changed {
				continue
			}
			w := write{kind: kindMetric, id: ids[i], snap: r.Snap, fresh: prev == nil, events: r.Events}
			if prev == nil && r.Final && p.settled(st, p.now()) {
				// Else the call stays open for changes after its end: planOpen
				// moves it once settled.
				w.terminal = &cursor.Tracked{ID: ids[i], At: endOr(st.EndedAt, m.UpdatedTime)}
			}
			if err := bt.add(w); err != nil {
				return fmt.Errorf("metrics: %w", err)
			}
		}
	}
	return nil
}

func endOr(a, b time.Time) time.Time {
	if a.IsZero() {
		return b
	}
	return a
}
