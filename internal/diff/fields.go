package diff

import (
	"encoding/json"

	"github.com/callbus/callbus/events"
)

// field is one tracked field of a record: its name and its canonical JSON, or
// known=false when the observation says nothing about it (absent in an earlier API
// form), in which case the stored value stands.
type field struct {
	name  string
	value string
	known bool
}

func known(name string, v any) field { return field{name, raw(v), true} }

// compare applies fields to the stored values and returns the changes in field
// order. stored is updated in place; on the first observation (creating) nothing is
// reported as a change.
func compare(stored map[string]string, fields []field, creating bool) []events.Change {
	var out []events.Change
	for _, f := range fields {
		if !f.known {
			continue
		}
		old, had := stored[f.name]
		stored[f.name] = f.value
		if creating || !had || old == f.value {
			continue
		}
		out = append(out, events.Change{Field: f.name, Previous: json.RawMessage(old), Current: json.RawMessage(f.value)})
	}
	return out
}
