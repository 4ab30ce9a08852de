package backfill

import "bytes"

// The record ids the scanner notes as it passes over a report's values, so that
// a decoder reads only the records whose id it cannot tell (scan.go's value).

// idNote is the value of the member idKey of the last object value kept: ok
// when it was read here, as apijson reads it (plain digits; the last copy of a
// name given twice; zero when absent); not ok when only a decoder can tell (an
// escaped member name, a value other than plain digits, not an object).
type idNote struct {
	id int64
	ok bool
}

// memberNote follows the members of one object for value (offsets from the
// object's first byte).
type memberNote struct {
	expectName  bool // the next string at the object's level is a member name
	name        int  // where the member name being read begins; -1: none
	escapedName bool // a member name holds an escape: its spelling is the decoder's to read
	match       bool // the last member name read is the one noted
	value       int  // where its value begins, until the value ends; -1: none
	from, to    int  // the last value of the member noted; from -1: none
}

// named ends a member name: whether it is key.
func (m *memberNote) named(name, key []byte) {
	m.match, m.name = string(name) == string(key), -1
}

// valueEnds ends the value of the member noted, if it is the one.
func (m *memberNote) valueEnds(at int) {
	if m.value >= 0 {
		m.from, m.to, m.value = m.value, at, -1
	}
}

// read returns the member's value found in obj (the object's bytes).
func (m *memberNote) read(obj []byte) idNote {
	if m.escapedName {
		return idNote{}
	}
	if m.from < 0 {
		return idNote{ok: true} // absent: zero, as a decoder leaves it
	}
	v := bytes.TrimSpace(obj[m.from:m.to])
	neg := len(v) > 0 && v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	// Plain digits only, short of int64's range: anything else (null, a
	// string, a fraction, an exponent) is read by the decoder.
	if len(digits) == 0 || len(digits) > 18 || (len(digits) > 1 && digits[0] == '0') {
		return idNote{}
	}
	var id int64
	for _, d := range digits {
		if d < '0' || d > '9' {
			return idNote{}
		}
		id = id*10 + int64(d-'0')
	}
	if neg {
		id = -id
	}
	return idNote{id: id, ok: true}
}
