package poll

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
)

// Calls read one by one (GET /calls/{id}, or their metric) are read on a decaying
// schedule from an anchor: at anchor + 1m, 2m, 4m, … 32m, then every hour. A call
// that never ends, or that the API has lost, so costs a handful of requests an
// hour, however many cycles run.
const (
	readFirst = time.Minute
	readEvery = time.Hour
	// settleEvery is how often ended calls within MaxWindow whose changes after the
	// end may still come pull the calls window back to them: post-end changes
	// (recording, notes, transcription) need not be seen within a calls interval.
	settleEvery = time.Minute
	// maxMissing is how many single reads in a row may answer 404 before an open
	// call is given up.
	maxMissing = 3
)

// openReads is what the poller remembers of its single reads. It is not stored:
// a new leader reads every such call once, then follows the schedule.
type openReads struct {
	lastCalls   time.Time     // the present of the previous calls cycle
	lastMetrics time.Time     // the present of the previous metrics cycle
	sweep       time.Time     // when settling calls last pulled the window back
	missing     map[int64]int // consecutive 404s by call
}

// due reports whether a call on the decaying schedule from anchor has a read due
// after last and at or before now (always, when there was no previous cycle).
func due(anchor, last, now time.Time) bool {
	return last.IsZero() || !nextRead(anchor, last).After(now)
}

// nextRead is the first read of the schedule from anchor after after.
func nextRead(anchor, after time.Time) time.Time {
	d := after.Sub(anchor)
	if d < readFirst {
		return anchor.Add(readFirst)
	}
	step := readFirst
	for step <= d && step < readEvery {
		step *= 2
	}
	if step > d && step <= readEvery {
		return anchor.Add(step)
	}
	return anchor.Add((d/readEvery + 1) * readEvery)
}

// settled reports whether a call ended more than MetricsLookback ago: changes
// after the end (recording, notes, bill) are watched for that long.
func (p *Poller) settled(st diff.CallState, now time.Time) bool {
	return st.Ended && now.Sub(st.EndedAt) > p.cfg.MetricsLookback
}

// openAction is what a calls cycle does with an open call created before its
// window.
type openAction int

const (
	openKeep   openAction = iota // nothing this cycle
	openGiveUp                   // out of the open set, with a warning
	openDone                     // ended, settled, metric final: out of the open set
	openWiden                    // pull the window back to it
	openRead                     // read it one by one
)

// openActionOf decides for one open call o created before the window. Calls stay
// in the open set until they ended MetricsLookback ago and their metric is final,
// so that changes after the end are seen for calls of any length: ended calls within
// MaxWindow pull the window back once every settleEvery, older ones are read one by
// one on the decaying schedule from their end. Calls not ended within MaxWindow
// pull the window back every cycle; older ones are read one by one on the schedule
// from MaxWindow after their start. A call open GiveUpAfter after its start, or
// answered 404 maxMissing times in a row, is given up.
func (p *Poller) openActionOf(o cursor.Tracked, st diff.CallState, metricFinal, sweep bool, now time.Time) openAction {
	recent := o.At.After(now.Add(-p.cfg.MaxWindow))
	switch {
	case o.At.Before(now.Add(-p.cfg.GiveUpAfter)) || p.reads.missing[mustID(o.ID)] >= maxMissing:
		return openGiveUp
	case p.settled(st, now):
		if metricFinal || p.cfg.Intervals[ResMetrics] == 0 {
			return openDone
		}
		return openKeep // its metric is the metrics cycle's
	case st.Ended && recent && sweep:
		return openWiden
	case st.Ended && !recent && due(st.EndedAt, p.reads.lastCalls, now):
		return openRead
	case st.Ended:
		return openKeep
	case recent:
		return openWiden
	case due(o.At.Add(p.cfg.MaxWindow), p.reads.lastCalls, now):
		return openRead
	}
	return openKeep
}

// planOpen applies openActionOf to the open calls created before from. It returns
// the window's start and the calls to read one by one; when more than
// maxSingleReads are due at once, the window reaches back to them instead (a page
// of up to 1000 calls costs what one single read does).
func (p *Poller) planOpen(ctx context.Context, bt *batcher, open []cursor.Tracked, from, now time.Time) (time.Time, []int64, error) {
	before := createdBefore(open, from)
	if len(before) == 0 {
		return from, nil, nil
	}
	sweep := now.Sub(p.reads.sweep) >= settleEvery
	var single []cursor.Tracked
	err := p.eachTracked(ctx, before, func(o cursor.Tracked, s trackedState) error { // oldest first
		st := s.st // zero without a snapshot: open
		switch p.openActionOf(o, st, s.metricFinal, sweep, now) {
		case openGiveUp:
			p.log.Warn().Str("call_id", o.ID).Time("created", o.At).Bool("ended", st.Ended).Int("not_found", p.reads.missing[mustID(o.ID)]).
				Msg("giving up on a call still open (or without a final metric) long after it began, or no longer in the API")
			delete(p.reads.missing, mustID(o.ID))
			return bt.terminal(cursor.Tracked{ID: o.ID, At: now})
		case openDone: // a backlog may settle thousands at once: bt bounds its batches
			return bt.terminal(cursor.Tracked{ID: o.ID, At: st.EndedAt})
		case openWiden:
			from = minTime(from, o.At)
			if st.Ended {
				p.reads.sweep = now
			}
		case openRead:
			if len(single) <= maxSingleReads { // one past it is enough to widen (singleOrWiden)
				single = append(single, o)
			}
		}
		return nil
	})
	if err != nil {
		return from, nil, fmt.Errorf("calls: %w", err)
	}
	from, ids := singleOrWiden(from, single)
	return from, ids, nil
}

// createdBefore returns the tracked calls created before from: a prefix of open,
// which is oldest first (Store.OpenCalls), shared rather than copied.
func createdBefore(open []cursor.Tracked, from time.Time) []cursor.Tracked {
	n, _ := slices.BinarySearchFunc(open, from, func(o cursor.Tracked, t time.Time) int {
		if o.At.Before(t) {
			return -1
		}
		return 1
	})
	return open[:n]
}

// singleOrWiden returns the calls of due (oldest first) to read one by one, or,
// when they are more than maxSingleReads, none and the window start moved back to
// the oldest (a page of up to 1000 calls costs what one single read does).
func singleOrWiden(from time.Time, due []cursor.Tracked) (time.Time, []int64) {
	if len(due) > maxSingleReads {
		return minTime(from, due[0].At), nil
	}
	ids := make([]int64, len(due))
	for i, o := range due {
		ids[i] = mustID(o.ID)
	}
	return from, ids
}

// readOpen reads calls one by one into sink. A 404 is counted (openActionOf gives
// the call up after maxMissing in a row), not an error.
func (p *Poller) readOpen(ctx context.Context, sink *callSink, ids []int64) error {
	for _, id := range ids {
		c, err := p.api.GetCall(ctx, id)
		if callcenter.IsNotFound(err) {
			if p.reads.missing == nil {
				p.reads.missing = map[int64]int{}
			}
			p.reads.missing[id]++
			p.log.Warn().Int64("call_id", id).Int("times", p.reads.missing[id]).Msg("open call not found in the API")
			continue
		}
		if errors.Is(err, callcenter.ErrMalformedResponse) { // a bad record must not stall the resource
			p.log.Warn().Int64("call_id", id).Err(err).Msg("open call unreadable; read again on its next turn")
			continue
		}
		if err != nil {
			return fmt.Errorf("calls: get open call %d: %w", id, err)
		}
		delete(p.reads.missing, id)
		if err := sink.add([]events.Call{c}); err != nil {
			return err
		}
	}
	return nil
}
