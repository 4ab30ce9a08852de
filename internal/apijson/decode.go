// Package apijson decodes the call-center API's JSON tolerantly: numbers sent as
// strings, "" for null, several time layouts, unknown keys ignored. The record types
// of the events package and the API client's own types decode with it, so a record
// decodes the same way from the API and from an event.
package apijson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Field binds one JSON key (or several spellings of it, first non-null wins) to a
// decoder that stores into a struct field.
type Field struct {
	keys []string
	dec  func(raw json.RawMessage) error
}

// Object decodes the JSON object data field by field. Unknown keys are
// ignored, null leaves the zero value, and an error names the field. JSON null for
// the whole object is not an error: every field stays zero.
func Object(what string, data []byte, fields ...Field) error {
	if IsNull(data) {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("decode %s: %w", what, JSONErr(err))
	}
	for _, f := range fields {
		raw, key, ok := pick(obj, f.keys)
		if !ok {
			continue
		}
		if err := f.dec(raw); err != nil {
			return &fieldError{what: what, key: key, err: err}
		}
	}
	return nil
}

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

// pick returns the value of the first key present with a non-null value, else the
// first key present.
func pick(obj map[string]json.RawMessage, keys []string) (json.RawMessage, string, bool) {
	var (
		first    json.RawMessage
		firstKey string
		found    bool
	)
	for _, k := range keys {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		if !IsNull(raw) && strings.TrimSpace(string(raw)) != `""` {
			return raw, k, true
		}
		if !found {
			first, firstKey, found = raw, k, true
		}
	}
	return first, firstKey, found
}

// JSONErr drops the Go type names that encoding/json puts in its errors, which mean
// nothing to a reader of the API, while keeping syntax errors as they are.
func JSONErr(err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Errorf("want an object, got %s", te.Value)
	}
	return err
}

// Key binds the JSON key k to dec.
func Key(k string, dec func(json.RawMessage) error) Field {
	return Field{keys: []string{k}, dec: dec}
}

// Keys binds several spellings of one key to dec: the first non-null wins.
func Keys(dec func(json.RawMessage) error, ks ...string) Field {
	return Field{keys: ks, dec: dec}
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
		v, ok, err := toInt[T](raw)
		if ok {
			*p = v
		}
		return err
	}
}

func OptInt[T Integer](p **T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := toInt[T](raw)
		if ok {
			*p = &v
		}
		return err
	}
}

func Float(p *float64) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := ParseFloat(raw)
		if ok {
			*p = v
		}
		return err
	}
}

func OptFloat(p **float64) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := ParseFloat(raw)
		if ok {
			*p = &v
		}
		return err
	}
}

func Bool(p *bool) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := ParseBool(raw)
		if ok {
			*p = v
		}
		return err
	}
}

func Str[T ~string](p *T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := ParseString(raw)
		if ok {
			*p = T(v)
		}
		return err
	}
}

func OptStr(p **string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := ParseString(raw)
		if ok {
			*p = &v
		}
		return err
	}
}

func Time(p *time.Time) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := ParseTime(raw)
		if ok {
			*p = v
		}
		return err
	}
}

func OptTime(p **time.Time) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := ParseTime(raw)
		if ok {
			*p = &v
		}
		return err
	}
}

// Obj decodes an object with its own UnmarshalJSON into *p.
func Obj[T any](p *T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error { return json.Unmarshal(raw, p) }
}

// Ptr decodes a nullable object: null leaves *p nil.
func Ptr[T any](p **T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		if IsNull(raw) {
			return nil
		}
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			return err
		}
		*p = v
		return nil
	}
}

// Slice decodes an array; null leaves *p nil.
func Slice[T any](p *[]T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		if err := json.Unmarshal(raw, p); err != nil {
			if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field == "" {
				return fmt.Errorf("want an array, got %s", te.Value)
			}
			return err
		}
		return nil
	}
}

// Raw keeps a value of unspecified shape, normalised (see NormRaw); null
// leaves *p nil.
func Raw(p *json.RawMessage) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, err := NormRaw(raw)
		*p = v
		return err
	}
}

// RawSlice keeps an array of values of unspecified shape.
func RawSlice(p *[]json.RawMessage) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		if IsNull(raw) {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("want an array: %w", JSONErr(err))
		}
		for i, it := range items {
			n, err := NormRaw(it)
			if err != nil {
				return err
			}
			if n == nil {
				n = json.RawMessage("null")
			}
			items[i] = n
		}
		*p = items
		return nil
	}
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
