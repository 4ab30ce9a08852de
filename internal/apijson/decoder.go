package apijson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Decoder reads one JSON document in a single pass: records decode straight from
// its tokens, at every nesting level, instead of each level re-reading the bytes of
// the one below (as decoding into maps of raw values does). A document is read
// first by a scanner of well-formed JSON (the fast path, fastscan.go); on
// anything it does not read, the document is read again from its start through
// the streaming tokenizer of github.com/go-json-experiment/json (encoding/json/v2's
// jsontext, not yet stable in the standard library), which reports the errors.
// Both read as encoding/json does: duplicate keys and invalid UTF-8 are accepted.
// So a function given to Decode may run twice, and must start from nothing.
//
// Errors are of two kinds. A syntax error (the input is not JSON) is final: every
// later read returns it, and the document fails as a whole. Any other error (a
// value of the wrong type, a bad date) is the value's own: the decoder is then
// right after that value, so that a list can reject one record and go on.
type Decoder struct {
	in  []byte
	buf bytes.Buffer // in, read in place by dec
	dec jsontext.Decoder
	err error // the syntax error, once there is one
	// noRaw: Since returns nil (DecodeWithoutRaw), sparing a copy of every record
	// for readers that never look at it.
	noRaw bool
	strs  *[internSets][2]string // short strings shared between values (see str)
	alts  []altValue             // values of multi-spelling fields (see Object)
	// fast: the document is read by the fast path (fastscan.go), at the state
	// fs, until it gives up (bailed) and decode reads it again without.
	fast, bailed bool
	fs           fastState
}

// decOptions read as encoding/json does; no duplicate-name tracking also spares a
// set per object.
var decOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// Decode reads data, which must hold exactly one JSON value, with f. f may be
// called a second time, from the start of data (see Decoder): it must not keep
// what a first call did.
func Decode(data []byte, f func(*Decoder) error) error { return decode(data, false, f) }

// DecodeWithoutRaw is Decode for a reader that does not keep the records' Raw
// JSON: Since returns nil, so the records decoded leave their Raw field nil
// instead of holding a copy of their bytes (a page of 1,000 calls: about 1.5 MB
// and 1,000 allocations).
func DecodeWithoutRaw(data []byte, f func(*Decoder) error) error { return decode(data, true, f) }

// DecodeGeneral is Decode on the general path alone (the jsontext tokenizer),
// never the fast path (fastscan.go): the reference the fast path is tested
// against.
func DecodeGeneral(data []byte, f func(*Decoder) error) error {
	_, err := decodeOn(data, false, false, f)
	return err
}

func decode(data []byte, noRaw bool, f func(*Decoder) error) error {
	_, err := decodeOn(data, noRaw, true, f)
	return err
}

// decodeOn is decode, on the fast path first when fast is set; fellBack
// reports that the fast path gave up and the general path read the document.
func decodeOn(data []byte, noRaw, fast bool, f func(*Decoder) error) (fellBack bool, err error) {
	d := decoders.Get().(*Decoder)
	defer decoders.Put(d)
	defer d.reset(nil, false)
	if fast {
		d.reset(data, true)
		d.noRaw = noRaw
		if err = d.run(f); !d.bailed {
			return false, err
		}
	}
	d.reset(data, false)
	d.noRaw = noRaw
	return fast, d.run(f)
}

func (d *Decoder) run(f func(*Decoder) error) error {
	err := f(d)
	if err == nil {
		err = d.end()
	}
	return err
}

func (d *Decoder) reset(data []byte, fast bool) {
	d.in, d.err, d.noRaw = data, nil, false
	clear(d.alts[:cap(d.alts)]) // after a syntax error, objects left theirs
	d.alts = d.alts[:0]
	d.fast, d.bailed = fast, false
	d.fs.pos, d.fs.ready, d.fs.isName, d.fs.depth, d.fs.plainAt = 0, false, false, 0, -1
	d.fs.frames[0] = frame{}
	if fast && data != nil {
		return
	}
	d.buf = *bytes.NewBuffer(data)
	d.dec.Reset(&d.buf, decOptions...)
}

// end checks that nothing but whitespace follows the value read.
func (d *Decoder) end() error {
	if d.err != nil {
		return d.err
	}
	if d.fast {
		return d.fastEnd()
	}
	if _, err := d.dec.ReadToken(); err != io.EOF {
		return d.fail(errors.Join(errors.New("invalid data after the JSON value"), err))
	}
	return nil
}

// fail records err, a syntax or I/O error of the tokenizer, as final.
func (d *Decoder) fail(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if d.err == nil {
		d.err = &SyntaxError{err: err}
	}
	return d.err
}

// SyntaxError is an input that is not JSON: decoding fails as a whole.
type SyntaxError struct{ err error }

func (e *SyntaxError) Error() string { return "invalid JSON: " + e.err.Error() }
func (e *SyntaxError) Unwrap() error { return e.err }

// Failed returns the syntax error that ended decoding, or nil.
func (d *Decoder) Failed() error { return d.err }

// Peek returns the kind of the next value: 'n' null, 'f' false, 't' true, '"'
// string, '0' number, '{' object, '[' array; 0 after a syntax error.
func (d *Decoder) Peek() byte {
	if d.err != nil {
		return 0
	}
	if d.fast {
		switch c := d.prep(); c {
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return '0'
		default:
			return c
		}
	}
	k := d.dec.PeekKind()
	if k == 0 {
		_, err := d.dec.ReadToken()
		d.fail(err)
	}
	return byte(k)
}

// Value returns the next value as it is written (a slice of the input, valid as
// long as the input is), or a syntax error.
func (d *Decoder) Value() (json.RawMessage, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.fast {
		v, err := d.fastValue()
		return json.RawMessage(v), err
	}
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, d.fail(err)
	}
	return json.RawMessage(v), nil
}

// Skip reads past the next value.
func (d *Decoder) Skip() error {
	if d.err != nil {
		return d.err
	}
	if d.fast {
		_, err := d.fastValue()
		return err
	}
	if err := d.dec.SkipValue(); err != nil {
		return d.fail(err)
	}
	return nil
}

// delim reads the next token, which must be the delimiter '{', '}', '[' or ']'.
func (d *Decoder) delim() error {
	if d.err != nil {
		return d.err
	}
	if d.fast {
		return d.fastDelim()
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return d.fail(err)
	}
	return nil
}

// Mark is where the next value starts, for Since.
func (d *Decoder) Mark() int64 { return d.offset() }

// offset is the input offset after the last token read (on the fast path,
// maybe after the separator before the next: Span skips those).
func (d *Decoder) offset() int64 {
	if d.fast {
		return int64(d.fs.pos)
	}
	return d.dec.InputOffset()
}

// Since returns a copy of the value read since mark (see KeepRaw), for a
// record's Raw: nil for null, and nil when decoding without Raw
// (DecodeWithoutRaw).
func (d *Decoder) Since(mark int64) json.RawMessage {
	if d.noRaw {
		return nil
	}
	return KeepRaw(d.Span(mark))
}

// Span returns the value read since mark as it is written, whether or not
// Raw is kept: a slice of the input, valid as long as the input is (nil after
// a syntax error).
func (d *Decoder) Span(mark int64) []byte {
	end := d.offset()
	if d.err != nil || mark < 0 || end > int64(len(d.in)) || mark > end {
		return nil
	}
	// Between the mark and the value lie at most whitespace and the separator
	// before it (',' in a list, ':' after a key).
	return bytes.TrimLeft(d.in[mark:end], " \t\r\n,:")
}

// notA is the error of a value of kind k where the kind want ("an object", "an
// array") was expected; the value is skipped.
func (d *Decoder) notA(want string, k byte) error {
	if err := d.Skip(); err != nil {
		return err
	}
	return fmt.Errorf("want %s, got %s", want, kindName(k))
}

// kindName names a kind as encoding/json's type errors do.
func kindName(k byte) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
