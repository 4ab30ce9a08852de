package apijson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The scalar parsers below read one JSON value whichever way the API sends it. They
// report null (JSON null, or "" where a number or a time is expected) separately from
// a value so that nullable fields stay distinguishable from zero. Their errors never
// quote the value: server text is kept out of errors.

// Kind is the JSON kind of a raw value.
type Kind int

const (
	KindNull Kind = iota
	KindString
	KindNumber
	KindBool
)

// Scalar returns the text of a JSON scalar: a string unquoted, a number or a boolean
// as written. Objects and arrays are an error.
func Scalar(raw []byte) (string, Kind, error) {
	text, kind, err := scalar(raw)
	return string(text), kind, err
}

// scalar is Scalar without a copy where it can: the text of a string without
// escapes, or of a number, is a slice of raw.
func scalar(raw []byte) ([]byte, Kind, error) {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return nil, KindNull, errors.New("empty value")
	}
	switch raw[0] {
	case 'n':
		if string(raw) == "null" {
			return nil, KindNull, nil
		}
	case '"':
		if text, ok := plainString(raw); ok {
			return text, KindString, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, KindNull, errors.New("invalid string")
		}
		return []byte(s), KindString, nil
	case 't', 'f':
		if string(raw) == "true" || string(raw) == "false" {
			return raw, KindBool, nil
		}
	case '{':
		return nil, KindNull, errors.New("want a scalar, got an object")
	case '[':
		return nil, KindNull, errors.New("want a scalar, got an array")
	default:
		if plainInt(raw) || json.Valid(raw) {
			return raw, KindNumber, nil
		}
	}
	return nil, KindNull, errors.New("invalid JSON value")
}

// plainString returns the text of a quoted string that needs no unquoting: no
// escape, no control character, valid UTF-8 (the API's usual strings). Others go
// through encoding/json, which decodes escapes and replaces invalid UTF-8.
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return nil, false
	}
	text := raw[1 : len(raw)-1]
	for i, c := range text {
		if !plainASCII[c] {
			return text, plainRest(text[i:])
		}
	}
	return text, true
}

// plainRest is plainString's check of the rest of a text from its first byte
// that is not plainASCII.
func plainRest(rest []byte) bool {
	for _, c := range rest {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(rest)
}

// plainASCII holds the bytes a string needing no unquoting is mostly made of:
// printable ASCII but the quote and the backslash. A table lookup per byte is
// the cheapest test of the most frequent values a page holds.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// trimSpace is bytes.TrimSpace without its scan of both ends for the usual
// value, which starts and ends with printable ASCII (a Unicode space starts and
// ends with a byte of 0x80 or more).
func trimSpace(b []byte) []byte {
	if len(b) > 0 && b[0] > ' ' && b[0] < utf8.RuneSelf && b[len(b)-1] > ' ' && b[len(b)-1] < utf8.RuneSelf {
		return b
	}
	return bytes.TrimSpace(b)
}

// plainInt reports whether raw is a JSON integer in its plain form: an optional
// minus and digits without a leading zero (the API's usual numbers), valid without
// a scan.
func plainInt(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// IsNull reports whether raw is JSON null.
func IsNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// ParseInt reads an integer sent as 12, 12.0, "12" or "12.0". ok is false for null
// and "".
func ParseInt(raw []byte) (v int64, ok bool, err error) {
	if len(raw) <= 18 && plainInt(raw) { // the usual, as scalar and the test below would read it
		return digits(raw), true, nil
	}
	text, kind, err := scalar(raw)
	if err != nil || kind == KindNull {
		return 0, false, err
	}
	if kind == KindBool {
		return 0, false, errors.New("want an integer, got a boolean")
	}
	text = trimSpace(text)
	if len(text) == 0 {
		return 0, false, nil
	}
	if len(text) <= 18 && plainInt(text) { // fits an int64 whatever the digits
		return digits(text), true, nil
	}
	v, err = IntText(string(text))
	return v, err == nil, err
}

// digits is the value of a plainInt of at most 18 digits.
func digits(text []byte) int64 {
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	var v int64
	for _, c := range text {
		v = v*10 + int64(c-'0')
	}
	if neg {
		return -v
	}
	return v
}

// IntText parses decimal integer text, accepting a float form with no fraction.
func IntText(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, errors.New("want an integer, got a non-numeric value")
	case f != math.Trunc(f):
		return 0, errors.New("want an integer, got a fraction")
	case f < -9.2e18 || f > 9.2e18:
		return 0, errors.New("integer out of range")
	}
	return int64(f), nil
}

// ParseFloat reads a finite number sent as 1, 1.5 or "1.5". ok is false for null
// and "".
func ParseFloat(raw []byte) (v float64, ok bool, err error) {
	if len(raw) <= 15 && plainInt(raw) { // the usual, as scalar and the test below would read it
		return float64(digits(raw)), true, nil
	}
	text, kind, err := scalar(raw)
	if err != nil || kind == KindNull {
		return 0, false, err
	}
	if kind == KindBool {
		return 0, false, errors.New("want a number, got a boolean")
	}
	text = trimSpace(text)
	if len(text) == 0 {
		return 0, false, nil
	}
	if len(text) <= 15 && plainInt(text) { // exact in a float64
		return float64(digits(text)), true, nil
	}
	v, err = strconv.ParseFloat(string(text), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, errors.New("want a finite number")
	}
	return v, true, nil
}

// ParseBool reads true/false, "true"/"false", 1/0 and "1"/"0". ok is false for null
// and "".
func ParseBool(raw []byte) (v bool, ok bool, err error) {
	text, kind, err := scalar(raw)
	if err != nil || kind == KindNull {
		return false, false, err
	}
	text = trimSpace(text)
	switch string(text) {
	case "":
		return false, false, nil
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	s := string(text)
	if b, err := strconv.ParseBool(s); err == nil {
		return b, true, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && (f == 0 || f == 1) {
		return f == 1, true, nil
	}
	return false, false, errors.New("want a boolean")
}

// ParseString reads a string; a number or a boolean is kept as its JSON text. ok is
// false for null only ("" is a value).
func ParseString(raw []byte) (v string, ok bool, err error) {
	s, kind, err := Scalar(raw)
	if err != nil || kind == KindNull {
		return "", false, err
	}
	return s, true, nil
}

// timeLayouts are tried in order; the first is the spec's form. Parsing accepts a
// fractional second after the seconds whether or not the layout shows one.
var timeLayouts = [...]string{
	time.RFC3339,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05", // no zone: taken as UTC
	"2006-01-02 15:04:05",
	"2006-01-02", // date only: midnight UTC
}

// ParseTime reads a date-time with any offset and returns it in UTC. ok is false
// for null and "".
func ParseTime(raw []byte) (t time.Time, ok bool, err error) {
	// The usual: a quoted date-time that rfc3339UTC reads holds only printable
	// ASCII without quotes or backslashes, so scalar would return the same text.
	if n := len(raw); n > 2 && raw[0] == '"' && raw[n-1] == '"' {
		if t, ok := rfc3339UTC(raw[1 : n-1]); ok {
			return t, true, nil
		}
	}
	text, kind, err := scalar(raw)
	if err != nil || kind == KindNull {
		return time.Time{}, false, err
	}
	if kind != KindString {
		return time.Time{}, false, errors.New("want a date-time string")
	}
	if t, ok := rfc3339UTC(text); ok {
		return t, true, nil // never zero: its year is at least 2
	}
	t, err = TimeText(string(text))
	return t, err == nil && !t.IsZero(), err
}

// TimeText parses s with timeLayouts; "" is the zero time.
func TimeText(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range timeLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		t = t.UTC()
		// encoding/json cannot write years outside [0, 9999]; an offset can push a
		// boundary value out of range.
		// Year 0 is no real date either ("0000-01-01"): a placeholder for none.
		if y := t.Year(); y < 1 || y > 9999 {
			return time.Time{}, fmt.Errorf("date-time year %d out of range", y)
		}
		return t, nil
	}
	return time.Time{}, errors.New("want an ISO 8601 date-time")
}
