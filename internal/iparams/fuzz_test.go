package iparams

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
)

// FuzzParse checks that no declaration file makes Parse panic, that a refusal is
// Problems, each with a message, and that every default it accepts is a valid
// value of its parameter, one that validates to itself.
func FuzzParse(f *testing.F) {
	seed, err := os.ReadFile("../../config/iparams.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	for _, s := range []string{
		`{}`, `[]`, `null`, `{"a": "text"}`, `{"a": {"display_name": "A", "type": "text"}}`,
		`{"a": {"display_name": "A", "type": "multiselect", "options": ["x", "y"], "default_value": ["y", "x"]}}`,
		`{"a": {"display_name": "A", "type": "number", "type_attributes": {"min": 1, "max": 9}, "default_value": "5"}}`,
		`{"a": {"display_name": "A", "type": "text", "regex": {"r": "^[a-z]+$", "r-error": "lower case"}}}`,
		`{"a": {"display_name": "A", "type": "domain", "type_attributes": {"product": "p", "domain": "example.com"}}}`,
		`{"a": {"display_name": "A", "type": "checkbox", "default_value": true, "events": [{"change": "onA"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			requireProblems(t, err, "")
			requireDeclaredKeys(t, data, err)
			return
		}
		for _, p := range d.Params() {
			if p.Default == nil {
				continue
			}
			v, msgs := p.value(p.Default)
			if len(msgs) > 0 || !reflect.DeepEqual(v, p.Default) {
				t.Fatalf("%s: default %#v validates to %#v, %q", p.Key, p.Default, v, msgs)
			}
		}
	})
}

// requireDeclaredKeys fails unless, in a file that is an object with members,
// every problem names one of its keys.
func requireDeclaredKeys(t *testing.T, data []byte, err error) {
	top, merr := members(data)
	if merr != nil || len(top) == 0 {
		return
	}
	keys := make(map[string]bool, len(top))
	for _, m := range top {
		keys[m.Key] = true
	}
	for _, p := range err.(Problems) {
		if !keys[p.Key] {
			t.Fatalf("problem %+v names no key of the file", p)
		}
	}
}

// fuzzDecls declares one parameter of every type, none required, so that a
// problem of a value can only be about the key that was given.
var fuzzDecls = []byte(`{
 "text": {"display_name": "T", "type": "text", "regex": {"r": "^[^x]*$", "r-error": "no x"}},
 "paragraph": {"display_name": "P", "type": "paragraph"},
 "dropdown": {"display_name": "D", "type": "dropdown", "options": ["a", "b c"]},
 "radio": {"display_name": "R", "type": "radio", "options": ["on", "off"]},
 "multiselect": {"display_name": "M", "type": "multiselect", "options": ["x", "y", "z"]},
 "email": {"display_name": "E", "type": "email"},
 "number": {"display_name": "N", "type": "number", "type_attributes": {"min": -5, "max": 99999}},
 "phone_number": {"display_name": "Ph", "type": "phone_number"},
 "date": {"display_name": "Da", "type": "date"},
 "url": {"display_name": "U", "type": "url"},
 "checkbox": {"display_name": "C", "type": "checkbox"},
 "domain": {"display_name": "Do", "type": "domain", "type_attributes": {"product": "p", "domain": "example.com"}},
 "api_key": {"display_name": "K", "type": "api_key", "secure": true, "type_attributes": {"product": "p"}}
}`)

// FuzzValidate checks the conversion of environment strings and of decoded JSON
// values: no panic, a refusal is Problems about the given key only, and an accepted
// value is stable: rendered as the environment would hold it (or as JSON) and
// validated again, it gives the same value.
func FuzzValidate(f *testing.F) {
	d, err := Parse(fuzzDecls)
	if err != nil {
		f.Fatal(err)
	}
	keys := d.Keys()
	for i, in := range []string{"abc", "line\nbreak", "b c", "on", "y, x,,y", "ops@example.com", "+42",
		"+1 (555) 010-9999", "2024-02-29", "https://example.com/x", "TRUE", "https://Acme.example.com/", "k3y"} {
		f.Add(uint8(i), in, false)
	}
	f.Add(uint8(4), `["z", "x"]`, true)
	f.Add(uint8(6), `12.0`, true)
	f.Add(uint8(10), `false`, true)
	f.Fuzz(func(t *testing.T, which uint8, in string, asJSON bool) {
		key := keys[int(which)%len(keys)]
		var raw any = in
		if asJSON {
			dec := json.NewDecoder(bytes.NewReader([]byte(in)))
			dec.UseNumber()
			if dec.Decode(&raw) != nil {
				return
			}
		}
		v, err := d.Validate(map[string]any{key: raw})
		if err != nil {
			requireProblems(t, err, key)
			return
		}
		again, err := d.Validate(map[string]any{key: rendered(t, v, key)})
		if err != nil {
			t.Fatalf("%s: %q validated, its rendering did not: %v", key, in, err)
		}
		if got, want := fuzzValue(again, key), fuzzValue(v, key); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %q validated to %#v, then to %#v", key, in, want, got)
		}
	})
}

// rendered is the value of key as an environment variable would hold it.
func rendered(t *testing.T, v *Values, key string) any {
	if s, err := v.Secret(key); err == nil {
		return s.Reveal()
	}
	val, err := v.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	if val == nil {
		return nil
	}
	return text(val)
}

// fuzzValue is the value of key, secure or not.
func fuzzValue(v *Values, key string) any {
	if s, err := v.Secret(key); err == nil {
		return s.Reveal()
	}
	val, _ := v.Get(key)
	return val
}

// requireProblems fails unless err is non-empty Problems, each with a message and,
// when key is not empty, about key.
func requireProblems(t *testing.T, err error, key string) {
	t.Helper()
	var ps Problems
	if !errors.As(err, &ps) || len(ps) == 0 {
		t.Fatalf("error %v (%T) is not Problems", err, err)
	}
	for _, p := range ps {
		if p.Message == "" || (key != "" && p.Key != key) {
			t.Fatalf("problem %+v: want a message about %q", p, key)
		}
	}
}
