package poll

import (
	"fmt"
	"slices"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
)

func (rb *rebuilder) call(c events.Call) error {
	prev, err := rb.get(kindCall, c.ID)
	if err != nil {
		return err
	}
	now := rb.p.now()
	if prev == nil {
		created := orTime(minTime(c.CreatedTime, now), now)
		if created.Before(rb.horizon) {
			return nil // a read will not return it: no state to keep for it
		}
		if !created.Before(rb.history) {
			rb.open[fmt.Sprint(c.ID)] = created
		}
	}
	r, err := diff.Call(rb.p.scope, prev, c, now)
	if err != nil {
		rb.p.log.Warn().Err(err).Int64("call_id", c.ID).Msg("rebuild: call skipped")
		return nil
	}
	rb.set(kindCall, c.ID, r.Snap)
	return nil
}

func (rb *rebuilder) participant(callID int64, p events.Participant) error {
	prev, err := rb.get(kindCall, callID)
	if err != nil || prev == nil {
		return err // a call left alone (before the horizon) or unknown
	}
	next, err := diff.ApplyParticipant(prev, p)
	if err != nil {
		rb.p.log.Warn().Err(err).Int64("call_id", callID).Msg("rebuild: participant skipped")
		return nil
	}
	rb.set(kindCall, callID, next)
	return nil
}

func (rb *rebuilder) metric(m events.CallMetric) error {
	call, err := rb.get(kindCall, m.CallID)
	if err != nil || call == nil {
		return err
	}
	st, err := diff.CallStateOf(call)
	if err != nil {
		return nil
	}
	st.Overdue = true // announced final: final it stays, whatever made it so
	prev, err := rb.get(kindMetric, m.CallID)
	if err != nil {
		return err
	}
	r, err := diff.Metric(rb.p.scope, prev, m, st)
	if err != nil || r.Snap == nil {
		return nil
	}
	rb.set(kindMetric, m.CallID, r.Snap)
	return nil
}

func (rb *rebuilder) user(u events.User) error {
	prev, err := rb.get(kindUser, u.ID)
	if err != nil {
		return err
	}
	r, err := diff.User(rb.p.scope, prev, u, diff.StatusNames{}, rb.p.now())
	if err != nil {
		return nil
	}
	rb.set(kindUser, u.ID, r.Snap)
	return nil
}

func (rb *rebuilder) team(d events.TeamData) error {
	if slices.ContainsFunc(d.Changes, func(c events.Change) bool {
		return c.Field == "deleted" && string(c.Current) == "true"
	}) {
		rb.set(kindTeam, d.Team.ID, nil) // announced gone (TeamGone)
		return nil
	}
	prev, err := rb.get(kindTeam, d.Team.ID)
	if err != nil {
		return err
	}
	r, err := diff.Team(rb.p.scope, prev, d.Team, rb.p.now())
	if err != nil {
		return nil
	}
	rb.set(kindTeam, d.Team.ID, r.Snap)
	return nil
}

// commit writes the rebuilt snapshots (deleting those announced gone), tracks
// the calls Redis did not know as open, and sets the epoch and the point
// reconciled to, in bounded batches; the cursors go last, so that a rebuild cut
// short is done again by the next term.
func (rb *rebuilder) commit(epoch, newest string) error {
	bt := rb.p.newBatcher(rb.ctx)
	for ref := range rb.dirty {
		w := write{kind: ref.Kind, id: ref.ID, snap: rb.snaps[ref]}
		w.remove = w.snap == nil
		if at, ok := rb.open[ref.ID]; ok && ref.Kind == kindCall {
			w.open = &cursor.Tracked{ID: ref.ID, At: at}
		}
		if err := bt.add(w); err != nil {
			return err
		}
	}
	if err := bt.flush(); err != nil {
		return err
	}
	bt.cursor(cursorEpoch, epoch)
	bt.cursor(cursorReconciled, newest)
	return bt.flush()
}
