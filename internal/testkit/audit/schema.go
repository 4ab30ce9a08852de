package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/callbus/callbus/schemas"
)

// maxSchemaProblems bounds what ValidateSchemas reports: past it, one more line
// counts the rest.
const maxSchemaProblems = 100

// ValidateSchemas validates every message against the published schemas (the
// envelope, then the data against the schema its dataschema names, and the
// headers when the message has any); a message without a dataschema, or whose
// dataschema names no data file of schemas/ for its type, fails (callbus sends one
// on every event)
// and returns one problem per failing message, naming its stream sequence, id, type
// and the failing JSON pointers; nil when all pass. At most maxSchemaProblems messages are spelled out, then a count of the
// rest.
// The body is validated exactly as published (Message.Body); a message built
// without one is validated as its decoded envelope encodes.
func ValidateSchemas(msgs []Message, v *schemas.Validator) []string {
	var out []string
	failed := 0
	report := func(format string, args ...any) {
		failed++
		if failed <= maxSchemaProblems {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	for _, m := range msgs {
		if m.DecodeErr != nil {
			report("seq %d: not validated against the schemas: body is not an event: %v", m.Seq, m.DecodeErr)
			continue
		}
		body, err := m.Body, error(nil)
		if body == nil {
			body, err = json.Marshal(m.Event)
		}
		if err != nil {
			report("seq %d: not validated against the schemas: encode: %v", m.Seq, err)
			continue
		}
		var errs []string
		if uri := m.Event.DataSchema; uri == "" {
			errs = append(errs, "no dataschema")
		} else if !slices.Contains(v.DataSchemas(), uri) {
			errs = append(errs, fmt.Sprintf("dataschema %q is no data file of schemas/", uri))
		}
		if err := v.Validate(body); err != nil {
			errs = append(errs, err.Error())
		}
		if m.Header != nil {
			if err := v.ValidateHeaders(m.Header); err != nil {
				if ee := (*schemas.EventError)(nil); errors.As(err, &ee) {
					ee.Type = string(m.Event.Type)
				}
				errs = append(errs, err.Error())
			}
		}
		if len(errs) > 0 {
			report("seq %d: %s", m.Seq, strings.Join(errs, "; "))
		}
	}
	if n := failed - maxSchemaProblems; n > 0 {
		out = append(out, fmt.Sprintf("and %d more messages fail the schemas", n))
	}
	return out
}
