package sim

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// enc builds JSON by appending to a byte slice. It exists (rather than structs and
// encoding/json) because drift changes field types, key names and presence per
// record, and because lists of a thousand calls must encode fast. Commas are placed
// automatically; callers pair obj/arr with end.
type enc struct {
	b        []byte
	first    []bool // per open container: nothing written yet
	afterKey bool
}

// pre writes the separator a value or key needs.
func (e *enc) pre() {
	if e.afterKey {
		e.afterKey = false
		return
	}
	if n := len(e.first); n > 0 {
		if !e.first[n-1] {
			e.b = append(e.b, ',')
		}
		e.first[n-1] = false
	}
}

func (e *enc) obj() { e.pre(); e.b = append(e.b, '{'); e.first = append(e.first, true) }
func (e *enc) arr() { e.pre(); e.b = append(e.b, '['); e.first = append(e.first, true) }

// end closes the innermost object ('}') or array (']').
func (e *enc) end(c byte) { e.b = append(e.b, c); e.first = e.first[:len(e.first)-1] }

func (e *enc) key(k string) {
	e.pre()
	e.b = appendJSONString(e.b, k)
	e.b = append(e.b, ':')
	e.afterKey = true
}

func (e *enc) null()        { e.pre(); e.b = append(e.b, "null"...) }
func (e *enc) int(v int64)  { e.pre(); e.b = strconv.AppendInt(e.b, v, 10) }
func (e *enc) bool(v bool)  { e.pre(); e.b = strconv.AppendBool(e.b, v) }
func (e *enc) str(s string) { e.pre(); e.b = appendJSONString(e.b, s) }
func (e *enc) raw(s string) { e.pre(); e.b = append(e.b, s...) }
func (e *enc) float(v float64) {
	e.pre()
	e.b = strconv.AppendFloat(e.b, v, 'f', -1, 64)
}

// strOrNull writes s, or null when s is empty.
func (e *enc) strOrNull(s string) {
	if s == "" {
		e.null()
		return
	}
	e.str(s)
}

// time writes t (RFC 3339, second precision) in zone loc (nil: UTC with Z); the
// zero sec is null.
func (e *enc) time(t sec, loc *time.Location) {
	if t == 0 {
		e.null()
		return
	}
	e.pre()
	tt := t.Time()
	if loc != nil {
		tt = tt.In(loc)
	}
	e.b = append(e.b, '"')
	e.b = tt.AppendFormat(e.b, time.RFC3339)
	e.b = append(e.b, '"')
}

// bytes returns the encoded document.
func (e *enc) bytes() []byte { return e.b }

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// round4 rounds a money amount to four decimals.
func round4(v float64) float64 { return math.Round(v*10000) / 10000 }
