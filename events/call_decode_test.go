package events_test

import (
	"encoding/json"
	"testing"

	"github.com/callbus/callbus/events"
)

// TestCallDirection: the direction is kept lower-cased and trimmed whatever its
// JSON kind; null, alone or after a value, leaves what was there; a value of the
// wrong kind is the field's error.
func TestCallDirection(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    events.Direction
		wantErr bool
	}{
		{`{"direction":"incoming"}`, events.DirectionIncoming, false},
		{`{"direction":" Outgoing "}`, events.DirectionOutgoing, false},
		{`{"direction":"INCOMING","direction":null}`, events.DirectionIncoming, false},
		{`{"direction":null}`, "", false},
		{`{"direction":1}`, "1", false},
		{`{"direction":true}`, "true", false},
		{`{"direction":""}`, "", false},
		{`{"direction":"Incoming","direction":{"a":1}}`, events.DirectionIncoming, true},
		{`{"direction":["x"]}`, "", true},
	} {
		var call events.Call
		err := json.Unmarshal([]byte(c.in), &call)
		if call.Direction != c.want || (err != nil) != c.wantErr {
			t.Errorf("%s: got %q, %v; want %q, error %v", c.in, call.Direction, err, c.want, c.wantErr)
		}
	}
}
