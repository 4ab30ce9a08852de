// Package diff turns observations of API records into events: pure functions from
// (previous snapshot, fetched record) to the events the change implies and the next
// snapshot. No I/O, no clocks: the same inputs give the same events with the same
// ids, which is what makes a re-diff after a crash deduplicate.
//
// Snapshots are compact JSON (short keys, only what the next diff needs). Each one
// carries a per-entity event sequence that goes into event ids, so an entity that
// returns to an earlier state later yields a new event, never a repeated id.
//
// Rules shared by every diff:
//   - no change, no event; an unchanged snapshot is reported as such so the caller
//     writes nothing;
//   - an observation older than the snapshot (by updated_time) is ignored: events
//     never go back in time;
//   - fields absent from the earlier form of the call are not changes;
//   - status events chain: each one's previous equals the current of the one before
//     for the same entity.
package diff

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// Scope is whose events a diff produces: the account, and the epoch of the state
// the snapshots belong to. The poller draws a new epoch whenever the store has no
// state (first start, or a Redis that lost its data); it goes into every event id,
// so events re-derived from scratch after such a loss get new ids instead of
// colliding with, and being dropped as duplicates of, different earlier events.
type Scope struct {
	Account string
	Epoch   string
}

// emitter collects the events of one entity, numbering them from its snapshot's
// sequence.
type emitter struct {
	scope  Scope
	seq    *int64
	events []event.Envelope
	err    error
}

func (e *emitter) emit(t event.Type, entity string, at time.Time, data any) {
	if e.err != nil {
		return
	}
	*e.seq++
	key := strconv.FormatInt(*e.seq, 10)
	if e.scope.Epoch != "" {
		key = e.scope.Epoch + "/" + key
	}
	env, err := event.New(e.scope.Account, t, entity, key, at, data)
	if err != nil {
		e.err = err
		return
	}
	e.events = append(e.events, env)
}

// raw is the canonical JSON of v, for change values and snapshot fields.
func raw(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // only plain API types reach here; they always marshal
		return "null"
	}
	return string(b)
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
