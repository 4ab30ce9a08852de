package schemas

import (
	"fmt"
	"strings"
)

// Violation is one way an event breaks the schemas.
type Violation struct {
	// Pointer is the JSON pointer of the failing value in the message body, e.g.
	// "/data/call/id" ("" for the body itself).
	Pointer string
	// Message says what is wrong, e.g. "got string, want integer".
	Message string
}

// EventError is what Validate returns for a body that breaks the schemas.
type EventError struct {
	ID         string // the event's id, "" when it has none
	Type       string // the event's type as sent, "" when it has none or unknown
	Headers    bool   // the violations are in the NATS headers, not the body
	Violations []Violation
}

// maxShown bounds the violations Error spells out.
const maxShown = 5

// Error names the event and its first violations, e.g.
// `event 3f… (call.created): /data/call/id: got string, want integer`.
func (e *EventError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "event %q (%s): ", e.ID, e.Type)
	if e.Headers {
		b.WriteString("headers: ")
	}
	for i, v := range e.Violations {
		if i == maxShown {
			fmt.Fprintf(&b, "; and %d more", len(e.Violations)-maxShown)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		p := v.Pointer
		if p == "" {
			p = "/"
		}
		fmt.Fprintf(&b, "%s: %s", p, v.Message)
	}
	return b.String()
}
