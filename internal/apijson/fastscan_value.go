package apijson

import "encoding/binary"

// The fast path's reading of whole values (see fastscan.go): each function
// returns where the well-formed value it reads ends, or -1 for anything else.

func skipWS(in []byte, i int) int {
	for i < len(in) && (in[i] == ' ' || in[i] == '\n' || in[i] == '\r' || in[i] == '\t') {
		i++
	}
	return i
}

// valueStart holds the bytes a JSON value can start with.
var valueStart = func() (t [256]bool) {
	for _, c := range []byte(`"{[tfn-0123456789`) {
		t[c] = true
	}
	return t
}()

// scanValue returns the end of the well-formed value starting at in[i] (whose
// enclosing containers nest depth deep), or -1.
func scanValue(in []byte, i, depth int) int {
	switch c := in[i]; c {
	case '"':
		end, _ := scanString(in, i)
		return end
	case 'n':
		return literal(in, i, "null")
	case 't':
		return literal(in, i, "true")
	case 'f':
		return literal(in, i, "false")
	case '{', '[':
		return scanContainer(in, i, depth+1)
	}
	return scanNumber(in, i)
}

// scanContainer returns the end of the object or array starting at in[i].
func scanContainer(in []byte, i, depth int) int {
	if depth > maxFastDepth {
		return -1
	}
	obj := in[i] == '{'
	closer := closeOf(in[i])
	if i = skipWS(in, i+1); i < len(in) && in[i] == closer {
		return i + 1
	}
	for {
		if i >= len(in) {
			return -1
		}
		if obj {
			if in[i] != '"' {
				return -1
			}
			if i, _ = scanString(in, i); i < 0 {
				return -1
			}
			if i = skipWS(in, i); i >= len(in) || in[i] != ':' {
				return -1
			}
			if i = skipWS(in, i+1); i >= len(in) {
				return -1
			}
		}
		if !valueStart[in[i]] {
			return -1
		}
		if i = scanValue(in, i, depth); i < 0 {
			return -1
		}
		if i = skipWS(in, i); i >= len(in) {
			return -1
		}
		switch in[i] {
		case closer:
			return i + 1
		case ',':
			i = skipWS(in, i+1)
		default:
			return -1
		}
	}
}

func literal(in []byte, i int, lit string) int {
	if len(in)-i < len(lit) || string(in[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber returns the end of the JSON number starting at in[i], or -1.
func scanNumber(in []byte, i int) int {
	if i < len(in) && in[i] == '-' {
		i++
	}
	switch {
	case i >= len(in):
		return -1
	case in[i] == '0':
		i++
	case in[i] >= '1' && in[i] <= '9':
		i = digitsEnd(in, i+1)
	default:
		return -1
	}
	if i < len(in) && in[i] == '.' {
		if i++; i >= len(in) || !isDigit(in[i]) {
			return -1
		}
		i = digitsEnd(in, i)
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		if i++; i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || !isDigit(in[i]) {
			return -1
		}
		i = digitsEnd(in, i)
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(in []byte, i int) int {
	for i < len(in) && isDigit(in[i]) {
		i++
	}
	return i
}

// SWAR constants: a byte of 0x01 and of 0x80 in each lane.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// scanString returns the end of the string starting at in[i] (its quote), or
// -1: valid escapes, no control character; any other byte, invalid UTF-8
// included, as jsontext accepts it with AllowInvalidUTF8. plain reports a
// string of printable ASCII without escapes (see plainString).
func scanString(in []byte, i int) (end int, plain bool) {
	i++
	plain = true
	for {
		// Eight bytes at a time while each is printable ASCII but a quote or a
		// backslash (the word tests are exact for "any": see haszero in Bit
		// Twiddling Hacks); strings are most of a page's bytes.
		for i+8 <= len(in) {
			x := binary.LittleEndian.Uint64(in[i:])
			q, b := x^('"'*lanes01), x^('\\'*lanes01)
			if ((q-lanes01)&^q|(b-lanes01)&^b|(x-0x20*lanes01)&^x|x)&lanes80 != 0 {
				break
			}
			i += 8
		}
		for i < len(in) && plainASCII[in[i]] {
			i++
		}
		if i >= len(in) {
			return -1, false
		}
		switch c := in[i]; {
		case c == '"':
			return i + 1, plain
		case c >= 0x80: // as it is, whether or not valid UTF-8
			plain = false
			i++
		case c == '\\':
			plain = false
			if i+1 >= len(in) {
				return -1, false
			}
			switch in[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(in) || !isHex(in[i+2]) || !isHex(in[i+3]) || !isHex(in[i+4]) || !isHex(in[i+5]) {
					return -1, false
				}
				i += 6
			default:
				return -1, false
			}
		default: // a control character
			return -1, false
		}
	}
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
