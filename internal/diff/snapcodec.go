package diff

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Snapshots of calls and metrics are stored in a compact binary form, versioned by
// their first byte: snapV1 (below), or '{' for the JSON of earlier releases, which
// is still read (a state written before the upgrade goes on without a spurious
// event) and replaced by the binary form at the entity's next change.
//
// v1 call:   0x01, uvarint seq, time upd, time end (from upd), fields, participants
// v1 metric: 0x01, uvarint seq, time upd, fields
//
// where a time is 0 for none, else zigzag(t - base)+1 (base 0 for upd, upd for the
// others: they lie close to it); fields are a count, then per field its index in
// snapFieldNames (or 0xff and the name) and its value (encodeValue); participants
// a count, then per participant, by increasing id: zigzag id, zigzag status, time
// updated (from upd), gone (0 or 1).
const snapV1 = 0x01

var errSnapshot = errors.New("malformed snapshot")

// snapFieldNames numbers the tracked fields in the binary form. Append only: the
// index of a name is part of every stored snapshot.
var snapFieldNames = []string{
	"parent_call_id", "root_call_id", "assigned_agent_id", "assigned_agent_name",
	"assigned_team_id", "assigned_team_name", "assigned_call_queue_id", "assigned_call_queue_name",
	"assigned_ivr_id", "assigned_ivr_name", "call_notes", "bill_duration", "recording",
	"recording.transcription_url", "recording_to_redact", "integrated_resources", "parallel_call_groups",
	"ivr_time", "hold_duration", "call_work_time", "total_ringing_time", "talk_time",
	"answering_speed", "recording_duration", "cost", "csat", "tags",
}

const otherField = 0xff

var snapFieldIndex = func() map[string]byte {
	m := make(map[string]byte, len(snapFieldNames))
	for i, n := range snapFieldNames {
		m[n] = byte(i)
	}
	return m
}()

// Value tags of the binary form: the canonical JSON of a field is stored as the
// shortest of these that gives it back byte for byte.
const (
	tagNull   = iota // null
	tagInt           // an integer: zigzag varint
	tagEmpty         // ""
	tagNone          // []
	tagTrue          // true
	tagFalse         // false
	tagString        // a JSON string: its text between the quotes
	tagJSON          // any other JSON: its text
)

func appendTime(b []byte, t, base int64) []byte {
	if t == 0 {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, zigzag(t-base)+1)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// appendFields appends stored fields in index order (names outside the table last,
// sorted), so equal fields always give equal bytes.
func appendFields(b []byte, f map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(f)))
	var other []string
	for i, name := range snapFieldNames {
		if v, ok := f[name]; ok {
			b = appendValue(append(b, byte(i)), v)
		}
	}
	for name := range f {
		if _, ok := snapFieldIndex[name]; !ok {
			other = append(other, name)
		}
	}
	slices.Sort(other)
	for _, name := range other {
		b = append(b, otherField)
		b = appendString(b, name)
		b = appendValue(b, f[name])
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendValue appends the canonical JSON v in its shortest tagged form.
func appendValue(b []byte, v string) []byte {
	switch v {
	case "null":
		return append(b, tagNull)
	case `""`:
		return append(b, tagEmpty)
	case "[]":
		return append(b, tagNone)
	case "true":
		return append(b, tagTrue)
	case "false":
		return append(b, tagFalse)
	}
	if canonicalInt(v) {
		n, _ := strconv.ParseInt(v, 10, 64) // canonicalInt checked the syntax
		return binary.AppendUvarint(append(b, tagInt), zigzag(n))
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return appendString(append(b, tagString), v[1:len(v)-1])
	}
	return appendString(append(b, tagJSON), v)
}

// canonicalInt reports whether v is an integer as strconv.FormatInt writes it:
// no sign but '-', no leading zero, no "-0", and within int64.
func canonicalInt(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 19 || (d[0] == '0' && (len(d) > 1 || len(v) > 1)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	if len(d) < 19 {
		return true
	}
	_, err := strconv.ParseInt(v, 10, 64) // 19 digits: may overflow
	return err == nil
}

// reader decodes the binary form; the first error sticks and zero values follow.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errSnapshot
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errSnapshot
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) string() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errSnapshot
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) time(base int64) int64 {
	u := r.uvarint()
	if u == 0 {
		return 0
	}
	return unzigzag(u-1) + base
}

// count reads a count of items each at least min bytes long, refusing counts the
// rest of the input cannot hold (so a corrupt count allocates nothing huge).
func (r *reader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = errSnapshot
	}
	return int(min64(n, math.MaxInt32))
}

func min64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

func (r *reader) fields() map[string]string {
	n := r.count(2)
	f := make(map[string]string, n)
	for range n {
		var name string
		if i := r.byte(); i == otherField {
			name = r.string()
		} else if int(i) < len(snapFieldNames) {
			name = snapFieldNames[i]
		} else {
			r.err = errSnapshot
		}
		f[name] = r.value()
		if r.err != nil {
			return nil
		}
	}
	return f
}

func (r *reader) value() string {
	switch r.byte() {
	case tagNull:
		return "null"
	case tagInt:
		return strconv.FormatInt(unzigzag(r.uvarint()), 10)
	case tagEmpty:
		return `""`
	case tagNone:
		return "[]"
	case tagTrue:
		return "true"
	case tagFalse:
		return "false"
	case tagString:
		return `"` + r.string() + `"`
	case tagJSON:
		return r.string()
	}
	r.err = errSnapshot
	return ""
}
