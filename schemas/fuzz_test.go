package schemas

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// FuzzValidate checks the validator a consumer runs on every body: no panic; a
// refusal is either "not JSON" or an *EventError naming at least one violation;
// and a body the schemas accept is one the Go side reads too: it decodes as an
// event.Envelope that passes Validate, and its data decodes into the data type of
// its event type.
func FuzzValidate(f *testing.F) {
	v, err := New()
	if err != nil {
		f.Fatal(err)
	}
	files, err := filepath.Glob("examples/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no example events: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `null`, `[]`, `"x"`, `{"type":"call.created","data":{"call":1}}`} {
		f.Add([]byte(s))
	}
	// The known differences (see requireGoReads), from the fuzzer's findings.
	example, _ := os.ReadFile("examples/call.updated.json")
	for _, r := range []*strings.Replacer{
		strings.NewReplacer(`"2026-11-22T00:19:20Z"`, `"2026-11-22t00:19:20z"`),
		strings.NewReplacer(`"2026-11-22T00:19:20Z"`, `"2026-12-31T23:59:60Z"`),
		strings.NewReplacer(`"subject":`, `"TYPE": "x", "subject":`),
	} {
		f.Add([]byte(r.Replace(string(example))))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := v.Validate(body)
		var ee *EventError
		switch {
		case errors.As(err, &ee):
			if len(ee.Violations) == 0 || ee.Error() == "" {
				t.Fatalf("EventError without violations: %#v", ee)
			}
		case err != nil:
			if json.Valid(body) {
				t.Fatalf("JSON body refused as not JSON: %v", err)
			}
		default:
			requireGoReads(t, body)
		}
	})
}

// requireGoReads fails unless a body the schemas accept decodes into the Go
// envelope and data types. Two differences are known and left alone, as callbus
// never emits such bodies: RFC 3339 (so the schema's date-time) allows a
// lower-case "t" and "z" and a leap second, which Go's time package refuses; and
// encoding/json matches member names case-insensitively, so a body with both
// "type" and "TYPE" reads as whichever comes last.
func requireGoReads(t *testing.T, body []byte) {
	t.Helper()
	var e event.Envelope
	err := json.Unmarshal(body, &e)
	var pe *time.ParseError
	if errors.As(err, &pe) || foldedNames(body) {
		return
	}
	if err != nil {
		t.Fatalf("valid body does not decode as an envelope: %v", err)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("valid body decodes to an invalid envelope: %v", err)
	}
	gt, ok := dataTypes[e.Type]
	if !ok {
		t.Fatalf("valid body of type %q: no Go data type", e.Type)
	}
	if err := json.Unmarshal(e.Data, reflect.New(gt).Interface()); err != nil {
		t.Fatalf("valid %s data does not decode into %s: %v", e.Type, gt, err)
	}
}

// foldedNames reports whether an object anywhere in body has two members whose
// names are equal but for case.
func foldedNames(body []byte) bool {
	var doc any
	_ = json.Unmarshal(body, &doc)
	return hasFoldedNames(doc)
}

func hasFoldedNames(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(v))
		for name, member := range v {
			for _, other := range names {
				if strings.EqualFold(name, other) {
					return true
				}
			}
			names = append(names, name)
			if hasFoldedNames(member) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, hasFoldedNames)
	}
	return false
}
