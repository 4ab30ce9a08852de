package apijson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Field binds one JSON key (or several spellings of it, first non-null wins) to a
// decoder that stores into a struct field: a scalar's decoder is given the value
// as written, a nested value's decoder reads it from the Decoder.
type Field struct {
	key  string
	alt  []string // Keys: the spellings, in order of preference
	raw  func(json.RawMessage) error
	read func(*Decoder) error
}

// Func is a field's decoder: of a scalar (Int, Str, Time …) or of a nested value
// (Ptr, Slice …).
type Func interface {
	func(json.RawMessage) error | func(*Decoder) error
}

// Key binds the JSON key k to dec. k holds no backslash nor quote: object names
// are matched as written before they are unquoted.
func Key[F Func](k string, dec F) Field {
	switch f := any(dec).(type) {
	case func(json.RawMessage) error:
		return Field{key: k, raw: f}
	case func(*Decoder) error:
		return Field{key: k, read: f}
	}
	panic("unreachable")
}

// Keys binds several spellings of one scalar key to dec: the first non-null (nor
// "") in the order given wins, else the first present.
func Keys(dec func(json.RawMessage) error, ks ...string) Field {
	return Field{alt: ks, raw: dec}
}

// Object decodes the JSON object data field by field (see Decoder.Object).
func Object(what string, data []byte, fields ...Field) error {
	return Decode(data, func(d *Decoder) error { return d.Object(what, fields...) })
}

// Object reads the next value, a JSON object, field by field. Unknown keys are
// skipped, null leaves the zero value, a key given twice takes its last value, and
// an error names the field (the first field, in the order given, that failed).
// JSON null for the whole object is not an error: every field stays zero.
// Whatever the error, but a syntax error, the whole object has been read.
func (d *Decoder) Object(what string, fields ...Field) error {
	switch k := d.Peek(); k {
	case 0:
		return d.err
	case 'n':
		return d.Skip()
	case '{':
	default:
		err := d.notA("an object", k)
		if d.err != nil {
			return d.err
		}
		return fmt.Errorf("decode %s: %w", what, err)
	}
	if err := d.delim(); err != nil {
		return err
	}
	var st objectState
	// The values of multi-spelling fields go on the Decoder's stack of them,
	// shared by nested objects (each reads its own above the outer one's), so
	// that an object holding one costs no allocation.
	altStart := len(d.alts)
	if d.fast {
		if err := d.fastMembers(&st, fields); err != nil {
			return err
		}
	}
	next := 0 // objects usually list their keys in the order of fields
	for !d.fast {
		k := d.Peek()
		if k == 0 {
			return d.err
		}
		if k == '}' {
			break
		}
		if err := d.member(&st, fields, &next); err != nil {
			return err
		}
	}
	if err := d.delim(); err != nil {
		return err
	}
	st.alts = d.alts[altStart:]
	err := st.result(what, fields)
	clear(st.alts) // no slice of this input kept in a pooled decoder
	d.alts = d.alts[:altStart]
	return err
}

// field reads a key and returns the index of its field (-1 for an unknown key) and
// of its spelling, searching from fields[next]. (On the fast path, fastMembers
// has tried fields[next] before.)
func (d *Decoder) field(fields []Field, next int) (int, int, error) {
	name, err := d.Value()
	if err != nil {
		return 0, 0, err
	}
	// The name as written first: no key of ours holds a backslash, so a name
	// with an escape can only match once unquoted, which is then tried.
	if i, a := lookup(fields, next, name[1:len(name)-1]); i >= 0 || bytes.IndexByte(name, '\\') < 0 {
		return i, a, nil
	}
	if name, err = jsontext.AppendUnquote(nil, name); err != nil {
		return -1, 0, nil // invalid UTF-8: no key of ours
	}
	i, a := lookup(fields, next, name)
	return i, a, nil
}

// lookup returns the index of the field of key name (-1 if none) and of its
// spelling, searching from fields[next].
func lookup(fields []Field, next int, name []byte) (int, int) {
	i := next
	for range fields {
		if i >= len(fields) {
			i = 0
		}
		f := &fields[i]
		if f.alt == nil {
			if string(name) == f.key {
				return i, 0
			}
		} else {
			for a, k := range f.alt {
				if string(name) == k {
					return i, a
				}
			}
		}
		i++
	}
	return -1, 0
}

// member reads the next member of an object by its name (fields from next on
// looked at first; next moves past the one found) and decodes its value into st;
// a member of no field is skipped.
func (d *Decoder) member(st *objectState, fields []Field, next *int) error {
	i, a, err := d.field(fields, *next)
	if err != nil {
		return err
	}
	if i < 0 {
		return d.Skip()
	}
	*next = i + 1
	return d.decodeField(st, fields, i, a)
}

// decodeField decodes the value of fields[i] (spelling a); it returns only a
// syntax error, and records the field's own in st.
func (d *Decoder) decodeField(st *objectState, fields []Field, i, a int) error {
	f := &fields[i]
	if f.read != nil {
		err := f.read(d)
		if d.err != nil {
			return d.err
		}
		st.set(i, len(fields), 0, err)
		return nil
	}
	raw, err := d.Value()
	if err != nil {
		return err
	}
	if f.alt != nil {
		d.alts = append(d.alts, altValue{field: i, alt: a, raw: raw})
		return nil
	}
	st.set(i, len(fields), 0, f.raw(raw))
	return nil
}

// objectState is what Object keeps while reading an object: each field's error
// (allocated at the first), and the values of multi-spelling fields, decoded once
// the object is read.
type objectState struct {
	errs []keyedErr
	alts []altValue // a window on Decoder.alts, set once the object is read
}

// keyedErr is the error of a field found under its alt-th spelling.
type keyedErr struct {
	alt int
	err error
}

// altValue is the value of the alt-th spelling of fields[field]; values are
// slices of the input, which outlives the decoder.
type altValue struct {
	field, alt int
	raw        json.RawMessage
}

func (st *objectState) set(i, n, alt int, err error) {
	if st.errs == nil {
		if err == nil {
			return
		}
		st.errs = make([]keyedErr, n)
	}
	st.errs[i] = keyedErr{alt: alt, err: err}
}

// result decodes the multi-spelling fields and returns the first field error, in
// the order of fields.
func (st *objectState) result(what string, fields []Field) error {
	for i := range fields {
		f := &fields[i]
		if f.alt == nil || len(st.alts) == 0 {
			continue
		}
		if raw, a, ok := st.pick(i, len(f.alt)); ok {
			st.set(i, len(fields), a, f.raw(raw))
		}
	}
	for i, e := range st.errs {
		if e.err == nil {
			continue
		}
		key := fields[i].key
		if fields[i].alt != nil {
			key = fields[i].alt[e.alt]
		}
		// A copy: fields, and the decoders in them, then stay on the caller's stack.
		return &fieldError{what: strings.Clone(what), key: strings.Clone(key), err: e.err}
	}
	return nil
}

// pick returns the value of the first spelling of fields[i] present with a
// non-null value (the last value of a key given twice), else of the first present.
func (st *objectState) pick(i, spellings int) (json.RawMessage, int, bool) {
	var (
		first    json.RawMessage
		firstAlt int
		found    bool
	)
	for a := range spellings {
		var (
			raw json.RawMessage
			ok  bool
		)
		for _, v := range st.alts {
			if v.field == i && v.alt == a {
				raw, ok = v.raw, true
			}
		}
		if !ok {
			continue
		}
		if !IsNull(raw) && string(bytes.TrimSpace(raw)) != `""` {
			return raw, a, true
		}
		if !found {
			first, firstAlt, found = raw, a, true
		}
	}
	return first, firstAlt, found
}
