package schemas

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// FuzzValidate checks the validator a consumer runs on every body: no panic; a
// refusal is either "not JSON" or an *EventError naming at least one violation;
// and a body the schemas accept is one the Go side reads too: it decodes as an
// events.Envelope that passes Validate, and its data decodes into the data type of
// its event type.
func FuzzValidate(f *testing.F) {
	v, err := New()
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range Examples() {
		f.Add(b)
	}
	for _, s := range []string{`{}`, `null`, `[]`, `"x"`, `{"type":"call.created","data":{"call":1}}`} {
		f.Add([]byte(s))
	}
	// The known differences (see knownDifference), from the fuzzer's findings.
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
// envelope and data types. Some differences are known and left alone, as callbus
// never emits such bodies (see knownDifference).
func requireGoReads(t *testing.T, body []byte) {
	t.Helper()
	var doc any
	_ = json.Unmarshal(body, &doc)
	if knownDifference(doc) {
		return
	}
	var e events.Envelope
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("valid body does not decode as an envelope: %v", err)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("valid body decodes to an invalid envelope: %v", err)
	}
	data := events.DataOf(e.Type)
	if data == nil {
		t.Fatalf("valid body of type %q: no Go data type", e.Type)
	}
	if err := json.Unmarshal(e.Data, data); err != nil {
		t.Fatalf("valid %s data does not decode into %T: %v", e.Type, data, err)
	}
}

// knownDifference reports whether the decoded body v holds, anywhere, what the
// schemas accept and the Go types refuse or read differently:
//   - an object with two member names equal but for case: encoding/json matches
//     names case-insensitively, so "type" and "TYPE" read as whichever is last;
//   - a date-time Go's RFC 3339 parser refuses (RFC 3339 allows a lower-case "t"
//     and "z" and a leap second; the schema library takes "+0" for a two-digit
//     hour) or that is out of encoding/json's range once in UTC (year 0 at +01:00).
func knownDifference(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(v))
		for name, member := range v {
			if slices.ContainsFunc(names, func(o string) bool { return strings.EqualFold(name, o) }) {
				return true
			}
			names = append(names, name)
			if knownDifference(member) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, knownDifference)
	case string:
		if len(v) > 10 && v[4] == '-' && v[7] == '-' && (v[10] == 'T' || v[10] == 't') {
			at, err := time.Parse(time.RFC3339, v)
			return err != nil || at.UTC().Year() < 0
		}
	}
	return false
}
