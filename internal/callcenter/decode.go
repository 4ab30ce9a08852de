package callcenter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// field binds one JSON key (or several spellings of it, first non-null wins) to a
// decoder that stores into a struct field.
type field struct {
	keys []string
	dec  func(raw json.RawMessage) error
}

// decodeObject decodes the JSON object data field by field. Unknown keys are
// ignored, null leaves the zero value, and an error names the field. JSON null for
// the whole object is not an error: every field stays zero.
func decodeObject(what string, data []byte, fields ...field) error {
	if isNull(data) {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("decode %s: %w", what, jsonErr(err))
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
		if !isNull(raw) && strings.TrimSpace(string(raw)) != `""` {
			return raw, k, true
		}
		if !found {
			first, firstKey, found = raw, k, true
		}
	}
	return first, firstKey, found
}

// jsonErr drops the Go type names that encoding/json puts in its errors, which mean
// nothing to a reader of the API, while keeping syntax errors as they are.
func jsonErr(err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Errorf("want an object, got %s", te.Value)
	}
	return err
}

func key(k string, dec func(json.RawMessage) error) field {
	return field{keys: []string{k}, dec: dec}
}

func keys(dec func(json.RawMessage) error, ks ...string) field {
	return field{keys: ks, dec: dec}
}

// integer is the set of integer field types.
type integer interface{ ~int | ~int64 }

// toInt reads an integer of type T; ok is false for null and "".
func toInt[T integer](raw json.RawMessage) (T, bool, error) {
	v, ok, err := parseInt(raw)
	if err != nil || !ok {
		return 0, false, err
	}
	if int64(T(v)) != v {
		return 0, false, errors.New("integer out of range")
	}
	return T(v), true, nil
}

func intField[T integer](p *T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := toInt[T](raw)
		if ok {
			*p = v
		}
		return err
	}
}

func optIntField[T integer](p **T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := toInt[T](raw)
		if ok {
			*p = &v
		}
		return err
	}
}

func floatField(p *float64) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := parseFloat(raw)
		if ok {
			*p = v
		}
		return err
	}
}

func optFloatField(p **float64) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := parseFloat(raw)
		if ok {
			*p = &v
		}
		return err
	}
}

func boolField(p *bool) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := parseBool(raw)
		if ok {
			*p = v
		}
		return err
	}
}

func strField[T ~string](p *T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := parseString(raw)
		if ok {
			*p = T(v)
		}
		return err
	}
}

func optStrField(p **string) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := parseString(raw)
		if ok {
			*p = &v
		}
		return err
	}
}

func timeField(p *time.Time) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, ok, err := parseTime(raw)
		if ok {
			*p = v
		}
		return err
	}
}

func optTimeField(p **time.Time) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		v, ok, err := parseTime(raw)
		if ok {
			*p = &v
		}
		return err
	}
}

// objField decodes an object with its own UnmarshalJSON into *p.
func objField[T any](p *T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error { return json.Unmarshal(raw, p) }
}

// ptrField decodes a nullable object: null leaves *p nil.
func ptrField[T any](p **T) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		if isNull(raw) {
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

// sliceField decodes an array; null leaves *p nil.
func sliceField[T any](p *[]T) func(json.RawMessage) error {
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

// rawField keeps a value of unspecified shape, normalised (see normRaw); null
// leaves *p nil.
func rawField(p *json.RawMessage) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		v, err := normRaw(raw)
		*p = v
		return err
	}
}

// rawSliceField keeps an array of values of unspecified shape.
func rawSliceField(p *[]json.RawMessage) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		*p = nil
		if isNull(raw) {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("want an array: %w", jsonErr(err))
		}
		for i, it := range items {
			n, err := normRaw(it)
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

// normRaw returns raw as encoding/json writes it (compact, HTML-escaped), so that a
// value kept raw encodes and decodes back to the same bytes; null is nil.
func normRaw(raw json.RawMessage) (json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, errors.New("invalid JSON value")
	}
	return b, nil
}

// keepRaw copies data for a record's Raw field.
func keepRaw(data []byte) json.RawMessage {
	if isNull(data) {
		return nil
	}
	return append(json.RawMessage(nil), data...)
}
