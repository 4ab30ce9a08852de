package callcenter

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/callbus/callbus/events"
)

// dropper is a Redactor that drops what a data policy would: caller numbers,
// notes, emails.
type dropper struct{ n int }

func (d *dropper) Redact(v any) {
	d.n++
	switch r := v.(type) {
	case *events.Call:
		r.CallNotes, r.Raw = "", nil
		for i := range r.Participants {
			r.Participants[i].CallerNumber = nil
		}
	case *events.User:
		r.Email, r.Raw = "", nil
	}
}

// Every record the client returns has passed through the Redactor: list pages,
// single reads and records decoded one by one (an export report's, DecodeRecord).
func TestRedactorSeesEveryRecord(t *testing.T) {
	call := fixture(t, "call.json")
	if !bytes.Contains(call, []byte("+15550199")) || !bytes.Contains(call, []byte("wants a refund")) {
		t.Fatal("the fixture lacks the values the test looks for")
	}
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/calls":
			reply(w, 200, `{"calls": [`+string(call)+`]}`)
		case "/api/v1/users/8":
			reply(w, 200, `{"id": 8, "email": "yara@acme.example"}`)
		default:
			reply(w, 200, string(call))
		}
	})
	d := &dropper{}
	c := newTestClient(t, s, WithRedactor(d))
	page, err := c.ListCalls(t.Context(), ListCallsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := c.GetCall(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.GetUser(t.Context(), 8)
	if err != nil {
		t.Fatal(err)
	}
	var fromReport events.Call
	if !DecodeRecord(c, "export report", "calls", call, &fromReport) {
		t.Fatal("the report's record was rejected")
	}
	for name, v := range map[string]any{"list": page.Items[0], "get": one, "report": fromReport, "user": u} {
		s := fmt.Sprintf("%+v", v)
		for _, raw := range []string{"+15550199", "wants a refund", "yara@acme.example"} {
			if bytes.Contains([]byte(s), []byte(raw)) {
				t.Errorf("%s: %q passed the redactor: %s", name, raw, s)
			}
		}
	}
	if d.n != 4 {
		t.Errorf("the redactor saw %d records, want 4", d.n)
	}
}
