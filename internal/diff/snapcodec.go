package diff

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
)

// Snapshots of calls and metrics are stored in a compact binary form, versioned by
// their first byte: snapV1 (below), or '{' for the JSON of earlier releases, which
// is still read (a state written before the upgrade goes on without a spurious
// event) and replaced by the binary form at the entity's next observation.
//
// v1 call:   0x01, uvarint seq, time upd, time end (from upd), fields, participants
// v1 metric: 0x01, uvarint seq, time upd, fields
//
// where a time is 0 for none, else zigzag(t - base)+1 (base 0 for upd, upd for the
// others: they lie close to it); fields as appendFields writes them, each value as
// appendValue (snapvalue.go); participants a count, then per participant, by
// increasing id: zigzag id, zigzag status, time updated (from upd), gone (0 or 1).
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

func appendTime(b []byte, t, base int64) []byte {
	if t == 0 {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, zigzag(t-base)+1)
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// appendFields appends stored fields: a uvarint whose bit i says snapFieldNames[i]
// is there, their values in that order, then the count of the names outside the
// table and, sorted, each name and value; equal fields give equal bytes.
func appendFields(b []byte, f map[string]string) []byte {
	var bits uint64
	var values [64]string // by index in snapFieldNames: one lookup per name
	known := 0
	for i, name := range snapFieldNames {
		if v, ok := f[name]; ok {
			bits |= 1 << i
			values[i] = v
			known++
		}
	}
	b = appendTableFields(b, bits, &values)
	if known == len(f) { // no name outside the table: the usual case
		return append(b, 0)
	}
	var other []string
	for name := range f {
		if _, ok := snapFieldIndex[name]; !ok {
			other = append(other, name)
		}
	}
	slices.Sort(other)
	b = binary.AppendUvarint(b, uint64(len(other)))
	for _, name := range other {
		b = appendValue(appendString(b, name), f[name])
	}
	return b
}

// appendTableFields appends the bits of the names of the table that are there and
// their values (by index in snapFieldNames).
func appendTableFields(b []byte, bits uint64, values *[64]string) []byte {
	b = binary.AppendUvarint(b, bits)
	for i := range snapFieldNames {
		if bits&(1<<i) != 0 {
			b = appendValue(b, values[i])
		}
	}
	return b
}

// appendFieldList appends the known fields of fs as appendFields appends them
// from a map holding just those. ok is false, and nothing is appended, when one
// is outside the table.
func appendFieldList(b []byte, fs []field) ([]byte, bool) {
	var bits uint64
	var values [64]string
	for _, f := range fs {
		i, ok := snapFieldIndex[f.name]
		switch {
		case !f.known:
			continue
		case !ok:
			return b, false
		}
		bits |= 1 << i
		values[i] = f.value
	}
	return append(appendTableFields(b, bits, &values), 0), true
}

// appendNewFields appends the known fields of fs, a first observation's, as
// appendFields appends a map holding just those, without making that map
// unless a name is outside the table (then room, empty, takes them): putting a
// new call's 17 fields into the map and reading them back took some 60 map
// operations, hashing each name.
func appendNewFields(b []byte, fs []field, room map[string]string) []byte {
	if out, ok := appendFieldList(b, fs); ok {
		return out
	}
	compare(room, fs, true)
	return appendFields(b, room)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
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
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (r *reader) fields() map[string]string { return r.fieldsIn(nil) }

// fieldsIn is fields reading into sc's map and buffer (see scratch); sc may be
// nil.
func (r *reader) fieldsIn(sc *scratch) map[string]string {
	present := r.uvarint()
	// The values are read into one buffer and cut from one string made of it.
	var spans [64][2]int
	var text []byte
	if sc != nil {
		text = sc.text[:0]
	} else {
		text = make([]byte, 0, 1024)
	}
	for i := range snapFieldNames {
		if present&(1<<i) != 0 {
			start := len(text)
			text = r.appendValue(text)
			spans[i] = [2]int{start, len(text)}
		}
	}
	if present>>len(snapFieldNames) != 0 {
		r.err = errSnapshot
	}
	var all string
	var f map[string]string
	if sc != nil {
		sc.text = text[:0] // grown maybe: kept for the next
		f = sc.fields
	} else {
		f = make(map[string]string, bits.OnesCount64(present)+2) // +2: room for fields the diff adds
	}
	for i, name := range snapFieldNames {
		if present&(1<<i) == 0 {
			continue
		}
		v := text[spans[i][0]:spans[i][1]]
		if c, ok := constant(v); ok {
			f[name] = c
			continue
		}
		if all == "" {
			all = string(text)
		}
		f[name] = all[spans[i][0]:spans[i][1]]
	}
	for range r.count(2) {
		name := r.string()
		f[name] = r.value()
	}
	if r.err != nil {
		return nil
	}
	return f
}
