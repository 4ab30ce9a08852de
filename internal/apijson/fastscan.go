package apijson

import "errors"

// The fast path. A page from the API is well-formed JSON in all but a few
// responses, and reading it through jsontext's general tokenizer (its state
// machine, buffer management and name stack, per token) cost more than the
// records' own decoding. So a document is first read by the small scanner below,
// which handles well-formed JSON and nothing else: at the first thing it does not
// accept (a syntax error, nesting deeper than maxFastDepth, anything left after
// the value) it gives up, and the document is read again, from its start, by the
// general path (jsontext), which then reports whatever it reports. The scanner
// accepts only what jsontext accepts (as set up in decOptions: invalid UTF-8 in
// strings and duplicate names allowed) and yields the same tokens, so a document
// it reads decodes exactly as the general path decodes it
// (TestFastPathAsGeneralPath, FuzzFastPathAsGeneralPath).
//
// Giving up costs a second pass over the document: the functions given to
// Decode must therefore be able to run again from the start (every record
// decoder zeroes its record first).

// errFastGaveUp ends a pass of the fast path (see Decoder.bail); Decode never
// returns it.
var errFastGaveUp = &SyntaxError{err: errors.New("fast path gave up")}

// maxFastDepth is the deepest nesting the fast path reads (jsontext's limit is
// 10,000; API records nest four deep).
const maxFastDepth = 64

// Phases of a container being read by the fast path.
const (
	phStart = iota // after '{' or '[' (or at the document's start): a first member, or the close
	phNext         // after a member's value: ',' and the next member, or the close
	phColon        // after an object member's name: ':' and its value
)

// frame is an open container: kind '{', '[' or 0 for the document itself.
type frame struct{ kind, phase byte }

// fastState is where the fast path is in the document.
type fastState struct {
	pos    int  // the next byte to read
	ready  bool // pos is at the next token, its separator read
	isName bool // ready at an object member's name
	// plainAt is where the last value read starts when it is a string of
	// printable ASCII without escapes (its text is then what is between its
	// quotes), else -1.
	plainAt int
	depth   int
	frames  [maxFastDepth + 1]frame
}

// bail ends the fast path's pass: every later read fails at once, like after a
// syntax error, and decode reads the document again on the general path.
func (d *Decoder) bail() byte {
	d.bailed = true
	if d.err == nil {
		d.err = errFastGaveUp
	}
	return 0
}

// prep moves to the next token, past the separator its place requires, and
// returns its first byte: a value's, a name's '"', or the '}' or ']' that
// closes the open container; 0 after giving up on anything else.
func (d *Decoder) prep() byte {
	s := &d.fs
	if s.ready {
		return d.in[s.pos]
	}
	in := d.in
	i := skipWS(in, s.pos)
	if i >= len(in) {
		return d.bail()
	}
	c := in[i]
	f := &s.frames[s.depth]
	name := false
	switch f.phase {
	case phStart:
		switch {
		case f.kind == '{':
			if c != '"' && c != '}' {
				return d.bail()
			}
			name = c == '"'
		case f.kind == '[' && c == ']':
		case !valueStart[c]:
			return d.bail()
		}
	case phNext:
		if f.kind == 0 { // more after the document's value
			return d.bail()
		}
		if c == closeOf(f.kind) {
			break
		}
		if c != ',' {
			return d.bail()
		}
		if i = skipWS(in, i+1); i >= len(in) {
			return d.bail()
		}
		c = in[i]
		if name = f.kind == '{'; name && c != '"' || !name && !valueStart[c] {
			return d.bail()
		}
	case phColon:
		if c != ':' {
			return d.bail()
		}
		if i = skipWS(in, i+1); i >= len(in) || !valueStart[in[i]] {
			return d.bail()
		}
		c = in[i]
	}
	s.pos, s.ready, s.isName = i, true, name
	return c
}

func closeOf(kind byte) byte {
	if kind == '{' {
		return '}'
	}
	return ']'
}

// fastValue reads the next name or value whole, as jsontext's ReadValue does.
func (d *Decoder) fastValue() ([]byte, error) {
	c := d.prep()
	if c == 0 || c == '}' || c == ']' {
		d.bail()
		return nil, d.err
	}
	s := &d.fs
	start := s.pos
	var end int
	if s.plainAt = -1; c == '"' {
		var plain bool
		if end, plain = scanString(d.in, start); plain {
			s.plainAt = start
		}
	} else {
		end = scanValue(d.in, start, s.depth)
	}
	if end < 0 {
		d.bail()
		return nil, d.err
	}
	f := &s.frames[s.depth]
	if s.isName {
		f.phase = phColon
	} else {
		f.phase = phNext
	}
	s.pos, s.ready = end, false
	return d.in[start:end], nil
}

// fastName reads the next object member's name when it is, as written, the
// key of fields[next] or one of its spellings (objects usually list their keys
// in the order of fields): one comparison each instead of a scan and a lookup.
// It returns next and the spelling's index, or -1 having read nothing. A key
// holds no backslash nor quote, so the quote after it in the input ends the
// name. The ':' after the name is read too when a value follows, as prep would
// read it.
func (d *Decoder) fastName(fields []Field, next int) (int, int) {
	s := &d.fs
	if next >= len(fields) || !s.ready || !s.isName {
		return -1, 0
	}
	f := &fields[next]
	if f.alt == nil {
		if !d.nameIs(f.key) {
			return -1, 0
		}
		return next, 0
	}
	for a, k := range f.alt {
		if d.nameIs(k) {
			return next, a
		}
	}
	return -1, 0
}

// nameIs reads the name at the fast path's position (see fastName) when it is
// k as written, and reports whether it was.
func (d *Decoder) nameIs(k string) bool {
	s := &d.fs
	start := s.pos + 1
	end := start + len(k)
	if end >= len(d.in) || d.in[end] != '"' || string(d.in[start:end]) != k {
		return false
	}
	s.frames[s.depth].phase = phColon
	i := skipWS(d.in, end+1)
	if i < len(d.in) && d.in[i] == ':' {
		if j := skipWS(d.in, i+1); j < len(d.in) && valueStart[d.in[j]] {
			s.pos, s.ready, s.isName = j, true, false // as prep leaves it
			return true
		}
	}
	s.pos, s.ready = end+1, false // prep then gives up where it must
	return true
}

// fastMembers is Object's loop over the members on the fast path: the same
// steps, without the calls between them (Peek, field, decodeField) for the
// usual member, the expected key with a scalar value. It stops before the '}'.
func (d *Decoder) fastMembers(st *objectState, fields []Field) error {
	next := 0 // objects usually list their keys in the order of fields
	for {
		switch d.prep() {
		case 0:
			return d.err
		case '}':
			return nil
		}
		i, a := d.fastName(fields, next)
		switch {
		case i < 0:
			if err := d.member(st, fields, &next); err != nil {
				return err
			}
			continue
		case fields[i].raw != nil && fields[i].alt == nil:
			raw, err := d.fastValue()
			if err != nil {
				return err
			}
			st.set(i, len(fields), 0, fields[i].raw(raw))
		default:
			if err := d.decodeField(st, fields, i, a); err != nil {
				return err
			}
		}
		next = i + 1
	}
}

// fastDelim reads an opening or closing delimiter.
func (d *Decoder) fastDelim() error {
	s := &d.fs
	switch c := d.prep(); c {
	case '{', '[':
		if s.isName || s.depth == maxFastDepth {
			d.bail()
			return d.err
		}
		s.frames[s.depth].phase = phNext // the container is its parent's value
		s.depth++
		s.frames[s.depth] = frame{kind: c, phase: phStart}
	case '}', ']': // prep returns only the close of the open container
		s.depth--
	default:
		d.bail()
		return d.err
	}
	s.pos++
	s.ready = false
	return nil
}

// fastEnd is end on the fast path: the document's one value read, then only
// whitespace.
func (d *Decoder) fastEnd() error {
	s := &d.fs
	if s.depth != 0 || s.frames[0].phase != phNext || skipWS(d.in, s.pos) != len(d.in) {
		d.bail()
		return d.err
	}
	return nil
}
