package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// jsonWriter appends JSON exactly as encoding/json's Marshal writes it (HTML
// characters, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD, floats in its
// ES6 form, times as time.Time's MarshalJSON, raw JSON compacted): the event data
// is written without reflection (encoding/json's was a tenth of the poller's CPU),
// and its bytes stay those of the earlier releases, so event bodies and the ids
// that bind their transitions do not change. Equivalence is tested value by value
// against json.Marshal (dataenc_test.go). The first error sticks.
type jsonWriter struct {
	b   []byte
	err error
}

var (
	errJSONFloat = errors.New("json: unsupported value: NaN or infinite float")
	errJSONRaw   = errors.New("json: invalid raw JSON value")
)

func (w *jsonWriter) lit(s string) { w.b = append(w.b, s...) }

func (w *jsonWriter) int(v int64) { w.b = strconv.AppendInt(w.b, v, 10) }

func (w *jsonWriter) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

func (w *jsonWriter) optInt(p *int64) {
	if p == nil {
		w.lit("null")
		return
	}
	w.int(*p)
}

func (w *jsonWriter) optStr(p *string) {
	if p == nil {
		w.lit("null")
		return
	}
	w.str(*p)
}

func (w *jsonWriter) optTime(p *time.Time) {
	if p == nil {
		w.lit("null")
		return
	}
	w.time(*p)
}

func (w *jsonWriter) optFloat(p *float64) {
	if p == nil {
		w.lit("null")
		return
	}
	w.float(*p)
}

// time writes t as time.Time's MarshalJSON does; out of its years 0–9999 it fails.
func (w *jsonWriter) time(t time.Time) {
	w.b = append(w.b, '"')
	b, err := t.AppendText(w.b)
	if err != nil {
		w.fail(err)
		return
	}
	w.b = append(b, '"')
}

// float writes f as encoding/json writes a float64: like %g but with the ES6
// exponent cutoffs, and no padding of the exponent.
func (w *jsonWriter) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		w.fail(errJSONFloat)
		return
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(w.b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-09 → e-9
		b = b[:n-1]
	}
	w.b = b
}

// raw writes a json.RawMessage as encoding/json does: nil as null, anything else
// validated, compacted and HTML-escaped (it is a Marshaler). The values the diff
// holds (compact, no HTML character) are checked and copied.
func (w *jsonWriter) raw(v []byte) {
	switch {
	case v == nil:
		w.lit("null")
	case simpleJSON(v):
		w.b = append(w.b, v...)
	case !json.Valid(v):
		w.fail(errJSONRaw)
	case bytes.IndexAny(v, " \t\r\n<>&\u2028\u2029") < 0:
		w.b = append(w.b, v...) // compact already, nothing to escape
	default:
		var c bytes.Buffer
		_ = json.Compact(&c, v) // valid: cannot fail
		start := len(w.b)
		w.b = append(w.b, c.Bytes()...)
		if bytes.ContainsAny(w.b[start:], "<>&\u2028\u2029") {
			var h bytes.Buffer
			json.HTMLEscape(&h, w.b[start:])
			w.b = append(w.b[:start], h.Bytes()...)
		}
	}
}

// simpleJSON reports whether v is a literal, an integer without sign or a string
// of plain characters: JSON that encoding/json copies unchanged.
func simpleJSON(v []byte) bool {
	switch string(v) {
	case "null", "true", "false":
		return true
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return plainString(string(v[1 : len(v)-1]))
	}
	if len(v) == 0 || len(v) > 18 || (v[0] == '0' && len(v) > 1) {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (w *jsonWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

const hexDigits = "0123456789abcdef"

// asIs[c] says encoding/json writes the ASCII character c as it is in a string
// (HTML escaping on): one load per character, not six comparisons.
var asIs = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// str writes s quoted as encoding/json does with HTML escaping (its default).
func (w *jsonWriter) str(s string) {
	b := append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if asIs[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
}
