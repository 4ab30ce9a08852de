package publish

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/schemas"
	"github.com/nats-io/nats.go/jetstream"
)

// bigCall is the call.created example of schemas/ with n participants (copies of
// its first, numbered), as the incident's call of 2,500 participants.
func bigCall(t *testing.T, n int) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../schemas/examples/call.created.json")
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	call := env["data"].(map[string]any)["call"].(map[string]any)
	first := call["participants"].([]any)[0].(map[string]any)
	parts := make([]any, n)
	for i := range parts {
		p := map[string]any{}
		for k, v := range first {
			p[k] = v
		}
		p["id"] = 10000001 + i
		parts[i] = p
	}
	call["participants"] = parts
	body, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// participants returns the ids of the participants of a call event body.
func participants(t *testing.T, body []byte) []int {
	t.Helper()
	var env struct {
		Data struct {
			Call struct {
				Participants []struct {
					ID int `json:"id"`
				} `json:"participants"`
			} `json:"call"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(env.Data.Call.Participants))
	for i, p := range env.Data.Call.Participants {
		ids[i] = p.ID
	}
	return ids
}

// checkReduced checks a reduced call body: within limit, valid against the
// schemas, the marker naming the participants cut from n, the first ones kept in
// order.
func checkReduced(t *testing.T, body []byte, limit, n int) {
	t.Helper()
	if len(body) > limit {
		t.Fatalf("reduced body is %d bytes, over the limit of %d", len(body), limit)
	}
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(body); err != nil {
		t.Fatalf("reduced body does not validate: %v", err)
	}
	var mark event.Truncation
	if err := json.Unmarshal(body, &mark); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("/call/participants=%d", n); mark.Truncated != want || mark.OriginalSize == 0 {
		t.Fatalf("marker %+v, want %s and the original size", mark, want)
	}
	ids := participants(t, body)
	if len(ids) == 0 || len(ids) >= n {
		t.Fatalf("kept %d participants of %d", len(ids), n)
	}
	for i, id := range ids {
		if id != 10000001+i {
			t.Fatalf("participant %d is %d: not the first ones in order", i, id)
		}
	}
}

func TestFitCutsTheLongestList(t *testing.T) {
	body := bigCall(t, 2500)
	const limit = 64 << 10
	got, mark, err := fit(body, limit)
	if err != nil {
		t.Fatal(err)
	}
	checkReduced(t, got, limit, 2500)
	if mark.OriginalSize != int64(len(body)) {
		t.Fatalf("original size %d, want %d", mark.OriginalSize, len(body))
	}
}

func TestFitCases(t *testing.T) {
	long := strings.Repeat("é", 2000) // 4,000 bytes: never split inside a character
	for _, tc := range []struct {
		name, body string
		limit      int
		want       string // the marker; "" when it cannot fit
	}{
		{"the larger list goes first", `{"id":"x","data":{"a":[1,2,3],"b":{"c":[` + strings.Repeat(`"yyyyyyyyyy",`, 200) + `"z"]}}}`, 300, "/b/c=201"},
		{"both lists when one is not enough", `{"data":{"a":[` + strings.Repeat(`"q",`, 100) + `"q"],"b":[` + strings.Repeat(`"r",`, 100) + `"r"]}}`, 120, "/a=101,/b=101"},
		{"a long string when there is no list", `{"data":{"notes":"` + long + `","id":1}}`, 600, "/notes=4000"},
		{"keys escaped in the pointer", `{"data":{"a/b~c":[` + strings.Repeat(`1,`, 300) + `1]}}`, 200, "/a~1b~0c=301"},
		{"lists keep an element while another cut makes room", `{"data":{"a":["` + strings.Repeat("x", 300) + `","` + strings.Repeat("y", 300) + `","z"],"b":[` + strings.Repeat(`1,`, 250) + `1]}}`, 500, "/a=3,/b=251"},
		{"nothing to cut", `{"data":{"id":"` + strings.Repeat("k", 100) + `"}}`, 50, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, mark, err := fit([]byte(tc.body), tc.limit)
			if tc.want == "" {
				if !errors.Is(err, errCannotFit) {
					t.Fatalf("got %s, %v; want errCannotFit", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > tc.limit || mark.Truncated != tc.want || !json.Valid(got) {
				t.Fatalf("got %d bytes (limit %d), marker %q, want %q: %s", len(got), tc.limit, mark.Truncated, tc.want, got)
			}
			if !strings.Contains(string(got), `"callbustruncated":"`+tc.want+`"`) {
				t.Fatalf("body lacks the marker: %s", got)
			}
			var env struct {
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal(got, &env); err != nil {
				t.Fatal(err)
			}
			for k, v := range env.Data {
				if l, ok := v.([]any); ok && len(l) == 0 {
					t.Errorf("list %s emptied although one element fits: %s", k, got)
				}
			}
		})
	}
}

// TestFitNotesInsideChanges is the incident's call.updated: 600 KB of notes
// replaced by 600 KB of other notes, so the big strings are the call's notes
// and the two values of its one change. Under a limit of 1 MiB it keeps its
// change and cuts the three strings to one length that uses the room.
func TestFitNotesInsideChanges(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal(schemas.Examples()["call.updated"], &env); err != nil {
		t.Fatal(err)
	}
	before, after := strings.Repeat("a", 600_000), strings.Repeat("b", 600_000)
	data := env["data"].(map[string]any)
	data["call"].(map[string]any)["call_notes"] = after
	data["changes"] = []any{map[string]any{"field": "call_notes", "previous": before, "current": after}}
	body, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1 << 20
	got, mark, err := fit(body, limit)
	if err != nil {
		t.Fatal(err)
	}
	checkFit(t, v, body, got, mark, limit)
	if want := "/call/call_notes=600000,/changes/0/current=600000,/changes/0/previous=600000"; mark.Truncated != want {
		t.Fatalf("marker %q, want %q", mark.Truncated, want)
	}
	var out struct {
		Data struct {
			Call struct {
				CallNotes string `json:"call_notes"`
			} `json:"call"`
			Changes []struct{ Previous, Current string } `json:"changes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(got, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Data.Changes) != 1 {
		t.Fatalf("%d changes, want the one change kept", len(out.Data.Changes))
	}
	c := out.Data.Changes[0]
	if n := len(out.Data.Call.CallNotes); n < 300_000 || len(c.Previous) != n || len(c.Current) != n {
		t.Fatalf("notes %d, previous %d, current %d bytes: want one length of about a third of 1 MiB", n, len(c.Previous), len(c.Current))
	}
	if len(got) < limit-64 {
		t.Fatalf("%d bytes: %d of room left unused", len(got), limit-len(got))
	}
}

// TestFitLastResort: a body that does not fit even with its one list at one
// element gets its data emptied, the marker naming the data's size, valid
// against the schemas' last-resort variant; under that form's size it fails.
func TestFitLastResort(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	body := bigCall(t, 50)
	got, mark, err := fit(body, 600)
	if err != nil {
		t.Fatal(err)
	}
	checkFit(t, v, body, got, mark, 600)
	var env map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("=%d", len(env["data"])); mark.Truncated != want {
		t.Fatalf("marker %q, want %q", mark.Truncated, want)
	}
	if _, _, err := fit(body, 200); !errors.Is(err, errCannotFit) {
		t.Fatalf("limit 200: %v, want errCannotFit", err)
	}
}

// A stream whose max_msg_size is below even the skeleton of a call (one
// participant, the strings emptied) gets the event in its last-resort form, valid
// against the schemas, in its place: the relay is not blocked and the events
// after it follow.
func TestRelayPublishesTheLastResortForm(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	b := newBed(t, false)
	const limit = 900
	b.updateStream(t, func(c *jetstream.StreamConfig) { c.MaxMsgSize = limit })
	big := bigCall(t, 200)
	b.commitBodies(t, []byte(`{"n":0}`), big, []byte(`{"n":2}`))
	r := b.relay(WithMaxPayload(b.js.Conn().MaxPayload))
	if err := r.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	msgs := streamMsgs(t, b.stream)
	checkInOrder(t, msgs, 3)
	if err := v.Validate(msgs[1].Data); err != nil {
		t.Fatalf("last-resort form does not validate: %v\n%s", err, msgs[1].Data)
	}
	var mark event.Truncation
	if err := json.Unmarshal(msgs[1].Data, &mark); err != nil || !strings.HasPrefix(mark.Truncated, "=") {
		t.Fatalf("marker %+v (%v), want the last-resort form =<bytes>: %s", mark, err, msgs[1].Data)
	}
}
