// Package apijson decodes the call-center API's JSON tolerantly: numbers sent as
// strings, "" for null, several time layouts, unknown keys ignored. The record types
// of the events package and the API client's own types decode with it, so a record
// decodes the same way from the API and from an event.
package apijson

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// fieldError is a field that failed to decode; nested records nest them, so the
// chain names the path to the bad value (see rejectionOf).
type fieldError struct {
	what, key string
	err       error
}

func (e *fieldError) Error() string {
	return fmt.Sprintf("decode %s field %q: %v", e.what, e.key, e.err)
}

func (e *fieldError) Unwrap() error { return e.err }

// FieldPath returns the keys of the fields err was found in, outermost first
// (empty for an error outside any field), and the error of the innermost one.
func FieldPath(err error) ([]string, error) {
	var path []string
	for {
		var fe *fieldError
		if !errors.As(err, &fe) {
			return path, err
		}
		path = append(path, fe.key)
		err = fe.err
	}
}

// JSONErr drops the Go type names that encoding/json puts in its errors, which mean
// nothing to a reader of the API, while keeping syntax errors as they are.
func JSONErr(err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Errorf("want an object, got %s", te.Value)
	}
	return err
}

// Integer is the set of integer field types.
type Integer interface{ ~int | ~int64 }

// toInt reads an integer of type T; ok is false for null and "".
func toInt[T Integer](raw json.RawMessage) (T, bool, error) {
	v, ok, err := ParseInt(raw)
	if err != nil || !ok {
		return 0, false, err
	}
	if int64(T(v)) != v {
		return 0, false, errors.New("integer out of range")
	}
	return T(v), true, nil
}

func Int[T Integer](p *T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, _, err := toInt[T](raw)
		if err == nil { // null sets the zero value: a later duplicate key wins
			*p = v
		}
		return err
	}
}

func OptInt[T Integer](p **T) func(json.RawMessage) error { return OptIntIn(p, nil) }

// OptIntIn is OptInt storing the value in *slot, the field's place in its
// record's block of optional values (see In), instead of in a new allocation.
func OptIntIn[T Integer](p **T, slot *T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := toInt[T](raw)
		if ok {
			*p = in(slot, v)
		}
		return err
	}
}

func Float(p *float64) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, _, err := ParseFloat(raw)
		if err == nil { // null sets the zero value: a later duplicate key wins
			*p = v
		}
		return err
	}
}

func OptFloat(p **float64) func(json.RawMessage) error { return OptFloatIn(p, nil) }

// OptFloatIn is OptFloat storing the value in *slot (see OptIntIn).
func OptFloatIn(p **float64, slot *float64) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := ParseFloat(raw)
		if ok {
			*p = in(slot, v)
		}
		return err
	}
}

func Bool(p *bool) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, _, err := ParseBool(raw)
		if err == nil { // null sets the zero value: a later duplicate key wins
			*p = v
		}
		return err
	}
}

// Str and OptStr read the value from the Decoder, not as raw bytes, so that
// repeated short strings are shared (see Decoder.str).
func Str[T ~string](p *T) func(*Decoder) error {
	return func(d *Decoder) error {
		v, _, err := d.stringValue()
		if err == nil { // null sets the zero value: a later duplicate key wins
			*p = T(v)
		}
		return err
	}
}

func OptStr(p **string) func(*Decoder) error { return OptStrIn(p, nil) }

// OptStrIn is OptStr storing the value in *slot (see OptIntIn).
func OptStrIn(p **string, slot *string) func(*Decoder) error {
	return func(d *Decoder) error {
		*p = nil
		v, ok, err := d.stringValue()
		if ok {
			*p = in(slot, v)
		}
		return err
	}
}

func Time(p *time.Time) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, _, err := ParseTime(raw)
		if err == nil { // null sets the zero value: a later duplicate key wins
			*p = v
		}
		return err
	}
}

func OptTime(p **time.Time) func(json.RawMessage) error { return OptTimeIn(p, nil) }

// OptTimeIn is OptTime storing the value in *slot (see OptIntIn).
func OptTimeIn(p **time.Time, slot *time.Time) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := ParseTime(raw)
		if ok {
			*p = in(slot, v)
		}
		return err
	}
}

// in stores v in *slot and returns slot, or a new place when slot is nil.
//
// A record decoder gives its optional fields slots in one block allocated per
// record, so that a record costs one allocation for all its optional values
// rather than one each (half of a page's allocations were these). The block
// lives as long as the record: its pointers are the record's own.
func in[T any](slot *T, v T) *T {
	if slot == nil {
		slot = new(T)
	}
	*slot = v
	return slot
}

// NormRaw returns raw as encoding/json writes it (compact, HTML-escaped), so that a
// value kept raw encodes and decodes back to the same bytes; null is nil.
func NormRaw(raw json.RawMessage) (json.RawMessage, error) {
	if IsNull(raw) {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, errors.New("invalid JSON value")
	}
	return b, nil
}

// KeepRaw copies data for a record's Raw field.
func KeepRaw(data []byte) json.RawMessage {
	if IsNull(data) {
		return nil
	}
	return append(json.RawMessage(nil), data...)
}
