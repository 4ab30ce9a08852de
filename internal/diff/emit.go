package diff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// Scope is whose events a diff produces: the account, and the epoch of the state
// the snapshots belong to. The poller draws a new epoch whenever the store has no
// state (first start, or a Redis that lost its data) and when it rebuilt the state
// from the stream after Redis went back in time; it goes into every event id,
// so events re-derived from scratch after such a loss get new ids instead of
// colliding with, and being dropped as duplicates of, different earlier events.
type Scope struct {
	Account string
	Epoch   string
}

// emitter collects the events of one entity, numbering them from its snapshot's
// sequence. An event's id binds the epoch, the sequence and the transition's
// digest (transitionDigest).
type emitter struct {
	scope Scope
	seq   *int64
	// fallback dates an event whose API time is null (zero): an event always has a
	// time, and never the year 1.
	fallback time.Time
	events   []event.Envelope
	err      error
}

func (e *emitter) emit(t event.Type, entity string, at time.Time, data any) {
	if e.err != nil {
		return
	}
	at = orTime(at, e.fallback)
	*e.seq++
	b, err := json.Marshal(data)
	if err != nil {
		e.err = fmt.Errorf("event %s %s: marshal data: %w", t, entity, err)
		return
	}
	key := strconv.FormatInt(*e.seq, 10)
	if e.scope.Epoch != "" {
		key = e.scope.Epoch + "/" + key
	}
	if d := transitionDigest(b); d != "" {
		key += "/" + d
	}
	env, err := event.New(e.scope.Account, t, entity, key, at, json.RawMessage(b))
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
