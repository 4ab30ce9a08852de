package iparams

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is one key/value pair of a JSON object, in file order.
type member struct {
	Key   string
	Value json.RawMessage
}

// errNotObject is returned by members for JSON that is not an object.
var errNotObject = errors.New("not a JSON object")

// members decodes a JSON object keeping its keys in file order and duplicates as
// they are (encoding/json would keep the last one silently). Numbers stay raw.
func members(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("decode object key: %w", err)
		}
		key, _ := tok.(string) // object keys are always strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("decode value of %q: %w", key, err)
		}
		out = append(out, member{Key: key, Value: raw})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fmt.Errorf("decode object end: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decode object: data after the closing brace")
	}
	return out, nil
}

// jsonKind names the JSON type of raw for messages: "string", "number", ….
func jsonKind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
