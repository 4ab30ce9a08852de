package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Truth-log entity and change names (see the package doc for the line format).
const (
	EntityCall        = "call"
	EntityParticipant = "participant"
	EntityUser        = "user"
	EntityTeam        = "team"
	EntityMetric      = "metric"
	EntityJob         = "job"

	ChangeCreated       = "created"
	ChangeUpdated       = "updated"
	ChangeStatusChanged = "status_changed"
	ChangeEnded         = "ended"
	ChangeDeleted       = "deleted"
	ChangeFinalized     = "finalized"
	ChangeJoined        = "joined"
)

// Short names for the writers inside the package.
const (
	entCall        = EntityCall
	entParticipant = EntityParticipant
	entUser        = EntityUser
	entTeam        = EntityTeam
	entMetric      = EntityMetric
	entJob         = EntityJob

	chCreated       = ChangeCreated
	chUpdated       = ChangeUpdated
	chStatusChanged = ChangeStatusChanged
	chEnded         = ChangeEnded
	chDeleted       = ChangeDeleted
	chFinalized     = ChangeFinalized
	chJoined        = ChangeJoined
)

// TruthLine is one line of the ground-truth log (Config.Truth), the one definition
// of its format that truthLog.write produces and ReadTruth decodes. From and To
// are the raw JSON values, nil when the line has none.
type TruthLine struct {
	Time   time.Time       `json:"time"`
	Entity string          `json:"entity"`
	ID     int64           `json:"id"`
	CallID int64           `json:"call_id,omitempty"` // participants and metrics only
	Change string          `json:"change"`
	Field  string          `json:"field,omitempty"`
	From   json.RawMessage `json:"from,omitempty"`
	To     json.RawMessage `json:"to,omitempty"`
}

// ReadTruth decodes a ground-truth log and calls fn for each line, in order,
// skipping blank ones. It stops at the first line that does not decode, or has a
// field TruthLine lacks (so reader and writer cannot drift apart), or for which fn
// returns an error, and returns an error naming the line (wrapping fn's).
func ReadTruth(r io.Reader, fn func(TruthLine) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l TruthLine
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&l); err != nil {
			return fmt.Errorf("truth line %d: %w", n, err)
		}
		if err := fn(l); err != nil {
			return fmt.Errorf("truth line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("truth: %w", err)
	}
	return nil
}

// noValue marks an absent from/to in a truth line (nil means JSON null).
type noValue struct{}

var none = noValue{}

// truthLog writes the ground-truth NDJSON log through a buffer. Safe for concurrent
// use; a nil *truthLog discards everything. The first write error is kept and
// returned by flush; later lines are dropped.
type truthLog struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
	err error
}

func newTruthLog(w io.Writer) *truthLog {
	if w == nil {
		return nil
	}
	return &truthLog{w: bufio.NewWriterSize(w, 64<<10)}
}

// write appends one line. callID is omitted when 0, field when "", from and to
// when none.
func (t *truthLog) write(at sec, entity string, id, callID int64, change, field string, from, to any) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	b := t.buf[:0]
	b = append(b, `{"time":"`...)
	b = at.Time().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","entity":"`...)
	b = append(b, entity...)
	b = append(b, `","id":`...)
	b = strconv.AppendInt(b, id, 10)
	if callID != 0 {
		b = append(b, `,"call_id":`...)
		b = strconv.AppendInt(b, callID, 10)
	}
	b = append(b, `,"change":"`...)
	b = append(b, change...)
	b = append(b, '"')
	if field != "" {
		b = append(b, `,"field":"`...)
		b = append(b, field...)
		b = append(b, '"')
	}
	if _, ok := from.(noValue); !ok {
		b = append(b, `,"from":`...)
		b = appendAny(b, from)
	}
	if _, ok := to.(noValue); !ok {
		b = append(b, `,"to":`...)
		b = appendAny(b, to)
	}
	b = append(b, '}', '\n')
	t.buf = b
	_, t.err = t.w.Write(b)
}

// flush writes out the buffer and returns the first error seen.
func (t *truthLog) flush() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	t.err = t.w.Flush()
	return t.err
}

// appendAny appends v as JSON, fast for the common scalar types.
func appendAny(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendJSONString(b, x)
	case sec:
		if x == 0 {
			return append(b, "null"...)
		}
		b = append(b, '"')
		b = x.Time().AppendFormat(b, time.RFC3339)
		return append(b, '"')
	}
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}
