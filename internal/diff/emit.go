package diff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
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
// digest (digest.go).
type emitter struct {
	scope Scope
	// seq is the entity's sequence: the snapshot's, then that of its last event.
	// The caller stores it back (held here, not pointed to, so that the
	// snapshot stays on the caller's stack).
	seq int64
	// fallback dates an event whose API time is null (zero): an event always has a
	// time, and never the year 1.
	fallback time.Time
	// latest, when set, is the time of the read: an API time more than maxAhead
	// after it is broken data and dates no event.
	latest time.Time
	events []events.Envelope
	err    error
	// buf holds the data of the events emitted so far, one after the other: an
	// entity's events take one allocation for their data, not one each. Each
	// event's data is a full slice expression of it, never written again.
	buf []byte
	// bufSize is the size of buf when it is made (emitBuf when 0): more for a
	// call seen for the first time, whose events (created, joined per
	// participant, ended) then fit in one buffer.
	bufSize int
	source  string // events.Source of the account, made at the first event
	reuse   *Reuse // the memory buf and events come from; nil: their own
}

// emitBuf is the usual size of an emitter's data buffer: most reads yield one or
// two events of about a kilobyte of data each (status changes, a metric).
const emitBuf = 2048

// emit adds an event of type t about entity at time at. data is a pointer to one
// of the events package's data types (see eventData); it does not escape, so the
// callers' data stays on their stack.
func (e *emitter) emit(t events.Type, entity string, at time.Time, data any) {
	if e.err != nil {
		return
	}
	at = orTime(at, e.fallback)
	if !e.latest.IsZero() && at.After(e.latest.Add(maxAhead)) {
		at = e.latest // dated ahead: broken data, taken as of the read
	}
	e.seq++
	if cap(e.buf)-len(e.buf) < emitBuf/4 {
		e.buf = make([]byte, 0, max(e.bufSize, emitBuf)) // the events before keep the old one
	}
	start := len(e.buf)
	w := jsonWriter{b: e.buf}
	sp, err := w.eventData(data)
	if err != nil {
		e.err = fmt.Errorf("event %s %s: marshal data: %w", t, entity, err)
		return
	}
	e.buf = w.b
	b := w.b[start:len(w.b):len(w.b)]
	var kb [96]byte
	key := kb[:0]
	if e.scope.Epoch != "" {
		key = append(append(key, e.scope.Epoch...), '/')
	}
	key = strconv.AppendInt(key, e.seq, 10)
	if d := sp.appendDigest(append(key, '/'), w.b); len(d) > len(key)+1 {
		key = d
	}
	e.add(t, entity, at, key, b)
}

// emitCopy is emit of data without a transition (no digest in its key) equal
// to the data of the i-th event emitted, whose bytes it shares rather than
// writes again: call.ended of a call seen first when it had ended carries the
// call as call.created does.
func (e *emitter) emitCopy(t events.Type, entity string, at time.Time, i int) {
	if e.err != nil {
		return
	}
	at = orTime(at, e.fallback)
	if !e.latest.IsZero() && at.After(e.latest.Add(maxAhead)) {
		at = e.latest
	}
	e.seq++
	var kb [96]byte
	key := kb[:0]
	if e.scope.Epoch != "" {
		key = append(append(key, e.scope.Epoch...), '/')
	}
	key = strconv.AppendInt(key, e.seq, 10)
	e.add(t, entity, at, key, e.events[i].Data)
}

// add appends the envelope of an event whose state key and data are made.
func (e *emitter) add(t events.Type, entity string, at time.Time, key, data []byte) {
	if e.source == "" {
		e.source = events.Source(e.scope.Account)
	}
	if e.events == nil {
		e.events = make([]events.Envelope, 0, 4)
	}
	e.events = append(e.events, event.NewData(e.scope.Account, e.source, t, entity, key, at, data))
}

// raw is the canonical JSON of v, for the tracked fields of users and teams (those
// of calls and metrics, the many, are written by fieldWriter, which gives the same
// bytes). The common scalar types skip encoding/json; they give the same bytes it
// would.
func raw(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case int64:
		return strconv.FormatInt(x, 10)
	case *int64:
		if x == nil {
			return "null"
		}
		return strconv.FormatInt(*x, 10)
	case string:
		if plainString(x) {
			return `"` + x + `"`
		}
	case *string:
		if x == nil {
			return "null"
		}
		if plainString(*x) {
			return `"` + *x + `"`
		}
	}
	b, err := json.Marshal(v)
	if err != nil { // only plain API types reach here; they always marshal
		return "null"
	}
	return string(b)
}

// maxAhead is how far after the time of the read an API time may lie and still
// be believed. The API's clock may run a little ahead of the poller's (a
// simulator at speed, clock skew); a record dated days ahead is broken data: its
// time is taken as absent (see apiTime), so that it neither dates an event nor
// makes the real copies that follow look stale.
const maxAhead = time.Hour

// apiTime is ms(t), or 0 (no time) when t lies more than maxAhead after read.
func apiTime(t, read time.Time) int64 {
	if t.After(read.Add(maxAhead)) {
		return 0
	}
	return ms(t)
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

// plainString reports whether encoding/json writes s as is between quotes:
// printable ASCII without the characters it escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
