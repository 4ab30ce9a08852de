package event

import (
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// bodySize leaves room for the whole body of plain attributes, whatever the
// type, the time's form (nanoseconds, an offset), the history and the policy:
// Encode allocates a body once.
func TestBodySize(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 30, 0, 123456789, time.FixedZone("x", -(9*3600+30*60)))
	for _, i := range events.Catalog {
		for _, data := range []any{nil, map[string]string{"current": "in_progress"}} {
			e, err := New("acme", i.Type, "calls/812/participants/4431", "k/1", at, data)
			if err != nil {
				t.Fatal(err)
			}
			e.Time = at // New makes it UTC: the longest form has an offset
			if data == nil {
				e.Data = nil
			}
			e.History, e.Policy = true, "9c1e07a2b4d3"
			m, err := Encode(e, "callcenter", "acme")
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Data) > bodySize(e) {
				t.Errorf("%s: body of %d bytes, room for %d: %s", i.Type, len(m.Data), bodySize(e), m.Data)
			}
		}
	}
}
