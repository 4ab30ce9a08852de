package apijson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
)

// The decoders of nested values read them from the Decoder in the same pass as the
// object around them. A record type decodes the same way whether it is a list
// item, a field or a whole response: its package registers its one-pass decoder
// (Register), and a type without one is read as a value and unmarshalled.

// readers holds the registered decoders: reflect.Type of T → func(*T, *Decoder) error.
var readers sync.Map

// Register sets the one-pass decoder of T, which reads exactly one value (null
// included) and, on an error that is not a syntax error, has read the whole value.
// Call it from an init function.
func Register[T any](f func(*T, *Decoder) error) {
	readers.Store(reflect.TypeFor[T](), f)
}

// readerOf returns the decoder registered for T, or nil.
func readerOf[T any]() func(*T, *Decoder) error {
	f, _ := readers.Load(reflect.TypeFor[T]())
	r, _ := f.(func(*T, *Decoder) error)
	return r
}

// Into reads the next value into *v with T's registered decoder, else with
// encoding/json (T's UnmarshalJSON).
func Into[T any](d *Decoder, v *T) error {
	return into(d, readerOf[T](), v)
}

func into[T any](d *Decoder, read func(*T, *Decoder) error, v *T) error {
	if read != nil {
		return read(v, d)
	}
	raw, err := d.Value()
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// Obj decodes an object into *p (see Into).
func Obj[T any](p *T) func(*Decoder) error {
	return func(d *Decoder) error { return Into(d, p) }
}

// Ptr decodes a nullable object: null leaves *p nil.
func Ptr[T any](p **T) func(*Decoder) error { return PtrIn(p, nil) }

// PtrIn is Ptr decoding the object into *slot, its place in the record's block
// of optional values (see OptIntIn), instead of a new allocation.
func PtrIn[T any](p **T, slot *T) func(*Decoder) error {
	return func(d *Decoder) error {
		*p = nil
		if k := d.Peek(); k == 0 || k == 'n' {
			return d.Skip()
		}
		v := slot
		if v == nil {
			v = new(T)
		}
		if err := Into(d, v); err != nil {
			return err
		}
		*p = v
		return nil
	}
}

// sliceStart is the capacity of a decoded slice at its first item.
const sliceStart = 2

// Slice decodes an array; null leaves *p nil, [] makes it empty. An item that
// fails does not stop the others from being read; the first error is returned.
func Slice[T any](p *[]T) func(*Decoder) error { return SliceIn(p, nil) }

// SliceIn is Slice holding the first len(first) items in first, a place in the
// record's block of optional values (see OptIntIn), instead of a new
// allocation; more are moved to one, as append does.
func SliceIn[T any](p *[]T, first []T) func(*Decoder) error {
	return func(d *Decoder) error {
		read := readerOf[T]()
		return readSlice(d, p, first, func(_ int, v *T) error { return into(d, read, v) })
	}
}

// SliceItems is SliceIn reading the i-th item (from 0) with read instead of
// T's registered decoder: a record gives its first items their own optional
// values' places in its block too.
func SliceItems[T any](p *[]T, first []T, read func(i int, v *T, d *Decoder) error) func(*Decoder) error {
	return func(d *Decoder) error {
		return readSlice(d, p, first, func(i int, v *T) error { return read(i, v, d) })
	}
}

// readSlice is SliceIn and SliceItems: it reads an array into *p with item.
func readSlice[T any](d *Decoder, p *[]T, first []T, item func(i int, v *T) error) error {
	*p = nil
	if k := d.Peek(); k == 0 || k == 'n' {
		return d.Skip()
	}
	s := []T{}
	err := d.Array(func() error {
		if cap(s) == 0 && first != nil {
			s = first[:0:len(first)]
		} else if cap(s) == 0 {
			// Room for a short list (a user's teams) at once; more would
			// hold memory for nothing while the page is.
			s = make([]T, 0, sliceStart)
		}
		s = append(s, *new(T))
		return item(len(s)-1, &s[len(s)-1])
	})
	if err == nil {
		*p = s
	}
	return err
}

// Array reads the next value, an array, calling item once for each of its items
// (which item must read). Null is no items; another kind is an error. An item's
// error does not stop the others from being read: the first is returned, and the
// whole array has been read.
func (d *Decoder) Array(item func() error) error {
	switch k := d.Peek(); k {
	case 0:
		return d.err
	case 'n':
		return d.Skip()
	case '[':
	default:
		return d.notA("an array", k)
	}
	if err := d.delim(); err != nil {
		return err
	}
	var first error
	for {
		k := d.Peek()
		if k == 0 {
			return d.err
		}
		if k == ']' {
			break
		}
		err := item()
		if d.err != nil {
			return d.err
		}
		if first == nil {
			first = err
		}
	}
	if err := d.delim(); err != nil {
		return err
	}
	return first
}

// Raw keeps a value of unspecified shape, normalised (see NormRaw); null
// leaves *p nil.
func Raw(p *json.RawMessage) func(*Decoder) error {
	return func(d *Decoder) error {
		v, err := d.NormValue()
		if d.err != nil {
			return err
		}
		*p = v
		return err
	}
}

// RawSlice keeps an array of values of unspecified shape.
func RawSlice(p *[]json.RawMessage) func(*Decoder) error { return RawSliceIn(p, nil) }

// RawSliceIn is RawSlice holding the first len(first) values in first (see
// SliceIn).
func RawSliceIn(p *[]json.RawMessage, first []json.RawMessage) func(*Decoder) error {
	return func(d *Decoder) error {
		*p = nil
		if k := d.Peek(); k == 0 || k == 'n' {
			return d.Skip()
		}
		items := first[:0:len(first)]
		if first == nil {
			items = []json.RawMessage{}
		}
		err := d.Array(func() error {
			n, err := d.NormValue()
			if d.err != nil {
				return err
			}
			if n == nil {
				n = json.RawMessage("null")
			}
			items = append(items, n)
			return err
		})
		if err == nil {
			*p = items
		}
		return err
	}
}

// NormValue reads the next value and returns it normalised (see NormRaw).
func (d *Decoder) NormValue() (json.RawMessage, error) {
	raw, err := d.Value()
	if err != nil {
		return nil, err
	}
	return normValue(raw)
}

// normValue is NormRaw for a value read by the Decoder, hence valid JSON: one
// already as encoding/json writes it (no whitespace between tokens, nothing
// HTML-escaped: no '<', '>', '&', nor U+2028 or U+2029, whose encodings start
// with 0xE2) is only copied, out of the input, instead of re-encoded.
func normValue(raw json.RawMessage) (json.RawMessage, error) {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '<', '>', '&', 0xE2:
			return NormRaw(raw)
		case ' ', '\t', '\n', '\r':
			if !inString { // inside a string, only a space: kept as it is
				return NormRaw(raw)
			}
		case '"':
			inString = !inString
		case '\\':
			i++ // the escaped byte, a quote maybe (only valid in a string)
		}
	}
	if string(raw) == "null" {
		return nil, nil
	}
	return bytes.Clone(raw), nil
}
