package backfill

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/callbus/callbus/internal/apijson"
)

// scanner splits a report into its members and the elements of their arrays
// without decoding them: it finds where each value ends (strings, escapes and
// nesting), and leaves reading the records to callcenter.DecodeRecord (apijson,
// the live path's decoder), which rejects a malformed one alone. A structure it
// cannot follow (a member without its colon, a report that ends midway) is a
// *reportError.
//
// It reads r into one buffer, grown only for a value larger than it: the value
// bytes it returns are valid until the next call. The records decoded from them
// keep none of them: decoders copy what a record keeps (strings, Raw), as the
// live path's pooled response bodies need too (callcenter/body.go). One value in
// memory at a time, whatever the report's size; a value it skips is not kept at
// all.
type scanner struct {
	r    io.Reader
	buf  []byte // the current slab; buf[pos:] is unread
	pos  int
	eof  bool
	read int64 // bytes of r consumed before buf[0]
	// idKey, when set, names a member of the objects value keeps (the
	// records' id), whose value it notes in id as it passes over them: the
	// download's index of the ids (indexReport) then decodes only the records
	// the note cannot read, where an apijson.Object per record was a tenth of
	// a backfill's CPU.
	idKey []byte
	id    idNote
}

// slabSize is what the scanner reads at a time.
const slabSize = 1 << 20

func newScanner(r io.Reader) *scanner { return &scanner{r: r} }

// offset is the position in the report of the next unread byte (for errors).
func (s *scanner) offset() int64 { return s.read + int64(s.pos) }

// more reads more of the report after buf[keep:], the part still needed, which
// moves to the buffer's start; false at the end of the report.
func (s *scanner) more(keep int) (bool, error) {
	if s.eof {
		return false, nil
	}
	rest := len(s.buf) - keep
	slab := s.buf[:rest]
	if rest > cap(s.buf)/2 || cap(s.buf) == 0 { // a large value: room to read more of it
		slab = make([]byte, rest, max(slabSize, 2*rest))
	}
	copy(slab, s.buf[keep:])
	s.read += int64(keep)
	s.pos -= keep
	s.buf = slab
	for {
		n, err := s.r.Read(slab[len(slab):cap(slab)])
		s.buf = slab[:len(slab)+n]
		switch {
		case errors.Is(err, io.EOF):
			s.eof = true
			return n > 0, nil
		case err != nil:
			return false, badReport("read at byte %d: %w", s.offset(), err)
		case n > 0:
			return true, nil
		}
	}
}

// space passes over white space and returns the next byte (0 at the end).
func (s *scanner) space() (byte, error) {
	for {
		for ; s.pos < len(s.buf); s.pos++ {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
			default:
				return c, nil
			}
		}
		if ok, err := s.more(s.pos); !ok {
			return 0, err
		}
	}
}

// expect consumes c, the next byte past white space.
func (s *scanner) expect(c byte, what string) error {
	got, err := s.space()
	if err != nil {
		return err
	}
	if got != c {
		return s.unexpected(got, what)
	}
	s.pos++
	return nil
}

func (s *scanner) unexpected(got byte, what string) error {
	if got == 0 {
		return badReport("the report ends at byte %d, want %s", s.offset(), what)
	}
	return badReport("byte %d: %q, want %s", s.offset(), got, what)
}

// value returns the next value as it is written: an object, array, string or
// scalar. With keep false it only passes over it and returns nil, holding no
// more of it than a slab.
func (s *scanner) value(keep bool) ([]byte, error) {
	c, err := s.space()
	if err != nil {
		return nil, err
	}
	if c == 0 {
		return nil, s.unexpected(c, "a value")
	}
	start, i := s.pos, s.pos
	depth, inString, escaped := 0, false, false
	// The member named idKey of a kept object, noted as the bytes go by
	// (offsets from start, which stay valid when the slab is refilled).
	noting := keep && s.idKey != nil
	note := noting && c == '{' // anything else is not ok: the decoder's to read
	var m memberNote
	if noting {
		s.id, m = idNote{}, memberNote{name: -1, value: -1, from: -1}
	}
	for {
		buf := s.buf
		for i < len(buf) {
			if inString {
				if escaped {
					escaped = false
					i++
					continue
				}
				// Most of a record is in its strings: on to the next quote or
				// backslash, eight bytes at a time.
				i = stringRun(buf, i)
				if i == len(buf) {
					break
				}
				if buf[i] == '\\' {
					escaped = true
					m.escapedName = m.escapedName || (note && m.name >= 0)
					i++
					continue
				}
				inString = false
				if depth == 0 {
					return s.end(start, i+1, keep), nil
				}
				if note && m.name >= 0 {
					m.named(buf[start+m.name:i], s.idKey)
				}
				i++
				continue
			}
			switch scanClass[buf[i]] {
			case scanPlain: // digits, letters, signs: on to the next that is not
				for i++; i < len(buf) && scanClass[buf[i]] == scanPlain; i++ {
				}
				continue
			case scanQuote:
				inString = true
				if note && depth == 1 && m.expectName {
					m.name, m.expectName = i+1-start, false
				}
			case scanOpen:
				depth++
				if note && depth == 1 {
					m.expectName = true
				}
			case scanClose:
				if depth == 0 { // a scalar ends at its container's end
					return s.end(start, i, keep), nil
				}
				if note && depth == 1 {
					m.valueEnds(i - start)
				}
				if depth--; depth == 0 {
					if note {
						s.id = m.read(buf[start:i])
					}
					return s.end(start, i+1, keep), nil
				}
			case scanColon:
				if note && depth == 1 && m.match {
					m.value, m.match = i+1-start, false
				}
			case scanComma:
				if depth == 0 {
					return s.end(start, i, keep), nil
				}
				if note && depth == 1 {
					m.valueEnds(i - start)
					m.expectName = true
				}
			case scanSpace:
				if depth == 0 {
					return s.end(start, i, keep), nil
				}
			}
			i++
		}
		if !keep { // what was passed over is not needed again
			start = i
		}
		s.pos = start
		i -= start
		ok, err := s.more(start)
		if err != nil {
			return nil, err
		}
		start, i = s.pos, s.pos+i
		if !ok {
			if depth == 0 && !inString && i > start { // a scalar ends the report
				return s.end(start, i, keep), nil
			}
			return nil, s.unexpected(0, "the rest of a value")
		}
	}
}

// Classes of the bytes outside strings, as value reads them (scanClass).
const (
	scanPlain = iota // part of a scalar: digits, letters, signs, anything else
	scanQuote
	scanOpen  // { [
	scanClose // } ]
	scanColon
	scanComma
	scanSpace // ' ', '\t', '\n', '\r'
)

// scanClass is the class of each byte outside strings, and stringStop the bytes
// that end a run of a string's text: one load per byte rather than a chain of
// comparisons.
var scanClass, stringStop = func() (cls [256]uint8, stop [256]bool) {
	for c, k := range map[byte]uint8{'"': scanQuote, '{': scanOpen, '[': scanOpen, '}': scanClose, ']': scanClose,
		':': scanColon, ',': scanComma, ' ': scanSpace, '\t': scanSpace, '\n': scanSpace, '\r': scanSpace} {
		cls[c] = k
	}
	stop['"'], stop['\\'] = true, true
	return cls, stop
}()

// stringRun returns the index of the first quote or backslash in buf from i
// on, or len(buf). It reads eight bytes at a time, as a word whose bytes that
// are a quote or a backslash it finds without a branch per byte: a byte b of
// x = w ^ c is zero where b == c, and (x - 0x01…) &^ x & 0x80… flags the
// lowest zero byte exactly (a borrow only runs upwards from a zero byte).
func stringRun(buf []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(buf); i += 8 {
		w := binary.LittleEndian.Uint64(buf[i:])
		q, b := w^(ones*'"'), w^(ones*'\\')
		if f := (q-ones)&^q&highs | (b-ones)&^b&highs; f != 0 {
			return i + bits.TrailingZeros64(f)/8
		}
	}
	for i < len(buf) && !stringStop[buf[i]] {
		i++
	}
	return i
}

func (s *scanner) end(start, end int, keep bool) []byte {
	s.pos = end
	if !keep {
		return nil
	}
	return s.buf[start:end:end]
}

// object reads the report's top-level object, calling member for each member
// name; member reads the member's value (array or value) before returning.
func (s *scanner) object(member func(key string) error) error {
	if err := s.expect('{', "a JSON object"); err != nil {
		return err
	}
	if c, err := s.space(); err != nil || c == '}' {
		s.pos++
		return err
	}
	for {
		raw, err := s.value(true)
		if err != nil {
			return err
		}
		key, ok, err := apijson.ParseString(raw)
		if err != nil || !ok {
			return badReport("byte %d: a member name, got %.40q", s.offset()-int64(len(raw)), raw)
		}
		if err := s.expect(':', "a colon after "+fmt.Sprintf("%q", key)); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		if done, err := s.separator('}', "a comma or the end of the object"); done || err != nil {
			return err
		}
	}
}

// separator reads what follows a member or an element: a comma (false) or the
// container's closing byte (true); anything else is what's unexpected.
func (s *scanner) separator(closing byte, what string) (bool, error) {
	c, err := s.space()
	if err != nil {
		return false, err
	}
	switch c {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	}
	return false, s.unexpected(c, what)
}

// array reads the array (or null) that comes next, handing each element to
// each, or passing over every element when each is nil.
func (s *scanner) array(key string, each func(raw []byte) error) error {
	c, err := s.space()
	if err != nil {
		return err
	}
	if c == 'n' {
		raw, err := s.value(true)
		if err == nil && string(raw) != "null" {
			err = badReport("%s: want an array, got %.40q", key, raw)
		}
		return err
	}
	if c != '[' {
		return badReport("%s: want an array at byte %d, got %q", key, s.offset(), c)
	}
	s.pos++
	if c, err := s.space(); err != nil || c == ']' {
		s.pos++
		return err
	}
	for {
		raw, err := s.value(each != nil)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if each != nil {
			if err := each(raw); err != nil {
				return err
			}
		}
		if done, err := s.separator(']', "a comma or the end of the array"); done || err != nil {
			if err != nil {
				err = fmt.Errorf("%s: %w", key, err)
			}
			return err
		}
	}
}
