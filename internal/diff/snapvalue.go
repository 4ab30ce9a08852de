package diff

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
)

// Value tags of the binary form: the canonical JSON of a field is stored as the
// shortest of these that gives it back byte for byte. Append only, like the
// tables.
const (
	tagNull    = iota // null
	tagInt            // an integer: zigzag varint
	tagEmpty          // ""
	tagNone           // []
	tagTrue           // true
	tagFalse          // false
	tagString         // a JSON string: its text between the quotes
	tagJSON           // any other JSON: its text
	tagKnown          // a JSON string of snapKnownStrings: its index
	tagObject         // a flat object (see appendObject)
	tagDecimal        // a decimal fraction: zigzag varint of its digits, then how many are decimals
	tagObjects        // an array of flat objects: the count, then each as tagObject's body

	// tagSmall + n is the integer n for 0 <= n < 256-tagSmall: one byte.
	tagSmall = 0x10
)

// snapObjectKeys numbers the member names of the flat objects of tracked fields
// (recordings, csat). Append only.
var snapObjectKeys = []string{
	"id", "url", "transcription_url", "duration", "duration_unit",
	"transfer_made", "outcome", "time", "time_unit", "integration_name", "type", "name",
}

// snapKnownStrings are string values common enough in tracked fields to be
// stored as an index. Append only.
var snapKnownStrings = []string{"seconds", "minutes", "USD", "EUR"}

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
	switch {
	case canonicalInt(v):
		n, _ := strconv.ParseInt(v, 10, 64) // canonicalInt checked the syntax
		if n >= 0 && n < 256-tagSmall {
			return append(b, byte(tagSmall+n))
		}
		return binary.AppendUvarint(append(b, tagInt), zigzag(n))
	case isDecimal(v):
		digits, scale := decimalParts(v)
		return append(binary.AppendUvarint(append(b, tagDecimal), zigzag(digits)), scale)
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if i := slices.Index(snapKnownStrings, v[1:len(v)-1]); i >= 0 {
			return append(b, tagKnown, byte(i))
		}
		return appendString(append(b, tagString), v[1:len(v)-1])
	case len(v) > 2 && v[0] == '{':
		if ob, ok := appendObject(append(b, tagObject), v); ok {
			return ob
		}
	case len(v) > 4 && v[0] == '[' && v[1] == '{':
		if ob, ok := appendObjects(b, v); ok {
			return ob
		}
	}
	return appendString(append(b, tagJSON), v)
}

// appendObjects appends v, an array of flat objects, as tagObjects, the count,
// then each object as appendObject does. ok is false, and nothing is appended,
// for any other JSON.
func appendObjects(b []byte, v string) ([]byte, bool) {
	out := append(b, tagObjects, 0) // the count, fixed below (one byte: < 128)
	n := 0
	for rest := v[1:]; ; n++ {
		// A flat object ends at its first '}' outside strings; a '}' inside one
		// leaves the piece with an unterminated string, which appendObject refuses.
		end := strings.IndexByte(rest, '}')
		var ok bool
		if end < 0 || n == 127 {
			return b, false
		}
		if out, ok = appendObject(out, rest[:end+1]); !ok {
			return b, false
		}
		if rest = rest[end+1:]; rest == "]" {
			break
		}
		if len(rest) < 2 || rest[0] != ',' {
			return b, false
		}
		rest = rest[1:]
	}
	out[len(b)+1] = byte(n + 1)
	return out, true
}

// appendObject appends v, a flat JSON object as encoding/json writes it (no
// space, names without escapes, values that are strings, numbers, true, false or
// null), as the member count, then per member its index in snapObjectKeys (or
// otherField and the name) and its value. ok is false, and nothing is appended,
// for any other JSON. What it appends reads back byte for byte (object); the
// fuzz test FuzzSnapshotValue checks that.
func appendObject(b []byte, v string) ([]byte, bool) {
	if len(v) < 2 || v[0] != '{' {
		return b, false
	}
	out := append(b, 0) // the count, fixed below (one byte: < 128)
	n := 0
	for rest := v[1:]; ; n++ {
		name, r, ok := cutJSONString(rest)
		if !ok || len(r) == 0 || r[0] != ':' || strings.IndexByte(name, '\\') >= 0 || n == 127 {
			return b, false
		}
		val, r, ok := cutScalar(r[1:])
		if !ok || len(r) == 0 {
			return b, false
		}
		if k := slices.Index(snapObjectKeys, name[1:len(name)-1]); k >= 0 {
			out = append(out, byte(k))
		} else {
			out = appendString(append(out, otherField), name[1:len(name)-1])
		}
		out = appendValue(out, val)
		if r == "}" {
			break
		}
		if r[0] != ',' {
			return b, false
		}
		rest = r[1:]
	}
	out[len(b)] = byte(n + 1)
	return out, true
}

// cutJSONString splits s after the JSON string it starts with (quotes included).
func cutJSONString(s string) (str, rest string, ok bool) {
	if len(s) == 0 || s[0] != '"' {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[:i+1], s[i+1:], true
		}
	}
	return "", s, false
}

// cutScalar splits s after the JSON string, number or literal it starts with.
func cutScalar(s string) (val, rest string, ok bool) {
	if len(s) > 0 && s[0] == '"' {
		return cutJSONString(s)
	}
	i := strings.IndexAny(s, ",}")
	if i <= 0 || strings.ContainsAny(s[:i], "{[\" \t\r\n") {
		return "", s, false
	}
	return s[:i], s[i:], true
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

// isDecimal reports whether v is a fraction that formatDecimal gives back:
// -?int.digits, at most 15 digits in all, the last one not 0.
func isDecimal(v string) bool {
	whole, frac, ok := strings.Cut(v, ".")
	if !ok || frac == "" || frac[len(frac)-1] == '0' || len(whole)+len(frac) > 16 || !canonicalInt(whole) {
		return false
	}
	for i := 0; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return false
		}
	}
	digits, scale := decimalParts(v)
	return whole != "-0" && formatDecimal(digits, scale) == v
}

// decimalParts splits a decimal fraction into its digits as an integer and the
// number of them after the point.
func decimalParts(v string) (int64, byte) {
	whole, frac, _ := strings.Cut(v, ".")
	n, _ := strconv.ParseInt(whole+frac, 10, 64)
	return n, byte(len(frac))
}

// formatDecimal writes digits with scale of them after the point (at least one
// before it).
func formatDecimal(digits int64, scale byte) string {
	var buf [48]byte
	return string(appendDecimal(buf[:0], digits, scale))
}

// appendDecimal appends formatDecimal(digits, scale).
func appendDecimal(b []byte, digits int64, scale byte) []byte {
	var db, fb [48]byte
	d := strconv.AppendUint(db[:0], uint64(max(digits, -digits)), 10)
	full := fb[:0]
	for i := len(d); i <= int(scale); i++ {
		full = append(full, '0')
	}
	full = append(full, d...)
	if digits < 0 {
		b = append(b, '-')
	}
	whole := len(full) - int(scale)
	return append(append(append(b, full[:whole]...), '.'), full[whole:]...)
}

// value reads the next value (what appendValue wrote) as its canonical JSON.
func (r *reader) value() string {
	var buf [128]byte
	return constOrString(r.appendValue(buf[:0]))
}

// constOrString is string(v), the common short values as constants.
func constOrString(v []byte) string {
	if c, ok := constant(v); ok {
		return c
	}
	return string(v)
}

// constant is v as a constant string, for the common short values.
func constant(v []byte) (string, bool) {
	switch string(v) {
	case "null":
		return "null", true
	case `""`:
		return `""`, true
	case "[]":
		return "[]", true
	case "true":
		return "true", true
	case "false":
		return "false", true
	case "0":
		return "0", true
	}
	return "", false
}

// appendValue appends the next value (what appendValue wrote) as its canonical
// JSON.
func (r *reader) appendValue(b []byte) []byte {
	tag := r.byte()
	if tag >= tagSmall {
		return strconv.AppendInt(b, int64(tag-tagSmall), 10)
	}
	switch tag {
	case tagNull:
		return append(b, "null"...)
	case tagInt:
		return strconv.AppendInt(b, unzigzag(r.uvarint()), 10)
	case tagEmpty:
		return append(b, `""`...)
	case tagNone:
		return append(b, "[]"...)
	case tagTrue:
		return append(b, "true"...)
	case tagFalse:
		return append(b, "false"...)
	case tagString:
		return append(append(append(b, '"'), r.bytes()...), '"')
	case tagJSON:
		return append(b, r.bytes()...)
	case tagKnown:
		if i := int(r.byte()); i < len(snapKnownStrings) {
			return append(append(append(b, '"'), snapKnownStrings[i]...), '"')
		}
	case tagObject:
		return r.appendObject(b)
	case tagObjects:
		n := r.count(1)
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.appendObject(b)
		}
		return append(b, ']')
	case tagDecimal:
		digits := unzigzag(r.uvarint())
		return appendDecimal(b, digits, r.byte())
	}
	r.err = errSnapshot
	return b
}

// appendObject appends what appendObject wrote, as the JSON it came from.
func (r *reader) appendObject(b []byte) []byte {
	n := r.count(2)
	b = append(b, '{')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		var name []byte
		if k := r.byte(); k == otherField {
			name = r.bytes()
		} else if int(k) < len(snapObjectKeys) {
			b = append(append(append(b, '"'), snapObjectKeys[k]...), '"', ':')
		} else {
			r.err = errSnapshot
		}
		if name != nil {
			b = append(append(append(b, '"'), name...), '"', ':')
		}
		start := len(b)
		b = r.appendValue(b)
		if r.err != nil || (len(b) > start && (b[start] == '{' || b[start] == '[')) {
			r.err = errSnapshot // members are scalars: no nesting to recurse into
			return b
		}
	}
	return append(b, '}')
}

// bytes reads a string (as appendString wrote it) without copying it.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errSnapshot
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}
