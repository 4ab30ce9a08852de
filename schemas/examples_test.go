package schemas

import (
	"encoding/json"
	"testing"

	"github.com/callbus/callbus/events"
)

// TestExamples: the sample event of every type (README, schemas/README.md), as a
// run against the simulator published it, validates.
func TestExamples(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for typ, body := range Examples() {
		if err := v.Validate(body); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		var e events.Envelope
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatal(err)
		}
		if want := events.DataSchema(e.Type, events.Version(e.Type)); e.DataSchema != want {
			t.Errorf("%s: dataschema %q, want %q (as the poller writes it)", typ, e.DataSchema, want)
		}
		seen[typ] = true
	}
	for _, typ := range v.Types() {
		if !seen[typ] {
			t.Errorf("no example of %s in schemas/examples", typ)
		}
	}
}
