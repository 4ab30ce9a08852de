package event

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/callbus/callbus/events"
	"strings"
	"testing"
	"time"
)

func TestIDDeterministicAndDistinct(t *testing.T) {
	a := ID("acme", events.CallCreated, "calls/1", "v1")
	if a != ID("acme", events.CallCreated, "calls/1", "v1") {
		t.Fatal("same inputs gave different ids")
	}
	seen := map[string]bool{a: true}
	for _, other := range []string{
		ID("acme2", events.CallCreated, "calls/1", "v1"),
		ID("acme", events.CallEnded, "calls/1", "v1"),
		ID("acme", events.CallCreated, "calls/2", "v1"),
		ID("acme", events.CallCreated, "calls/1", "v2"),
		ID("acm", events.CallCreated, "ecalls/1", "v1"),
	} {
		if seen[other] {
			t.Fatalf("id collision: %s", other)
		}
		seen[other] = true
	}
	if len(a) != 32 {
		t.Fatalf("id %q: got length %d want 32", a, len(a))
	}
}

func TestSubjects(t *testing.T) {
	s := events.Subject("callcenter", "acme", events.ParticipantStatusChanged)
	if s != "callcenter.acme.participant.status_changed" {
		t.Fatalf("got %s", s)
	}
	acct, typ, err := events.ParseSubject("callcenter", s)
	if err != nil || acct != "acme" || typ != events.ParticipantStatusChanged {
		t.Fatalf("parse: got %q %q %v", acct, typ, err)
	}
	for _, bad := range []string{"other.acme.call.created", "callcenter.acme.call.nope", "callcenter.acme"} {
		if _, _, err := events.ParseSubject("callcenter", bad); err == nil {
			t.Errorf("ParseSubject(%q): want error", bad)
		}
	}
	for _, tc := range []struct {
		prefix, account string
		ok              bool
	}{{"callcenter", "acme", true}, {"call.center", "acme", false}, {"cc", "ac me", false}, {"cc", "a*", false}, {"", "a", false}, {"cc", "acme-1_x", true}} {
		if err := events.CheckNames(tc.prefix, tc.account); (err == nil) != tc.ok {
			t.Errorf("CheckNames(%q,%q) = %v, want ok=%v", tc.prefix, tc.account, err, tc.ok)
		}
	}
}

func TestEnvelope(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 3, 0, time.FixedZone("x", 3600))
	e, err := New("acme", events.CallCreated, "calls/812", "created", at, map[string]int{"id": 812})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(e)
	want := `{"specversion":"1.0","id":"` + e.ID + `","source":"urn:callbus:account:acme","type":"call.created","subject":"calls/812","time":"2026-11-21T09:00:03Z","datacontenttype":"application/json","dataschema":"https://callbus.dev/schemas/data/call.created.v1.json","data":{"id":812}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	e.Type = "nope"
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "unknown type") {
		t.Fatalf("want unknown type error, got %v", err)
	}
	for _, i := range events.Catalog {
		if !events.Known(i.Type) || i.When == "" || i.Data == "" {
			t.Errorf("catalog entry %+v incomplete", i)
		}
	}
}

// idBefore is ID as earlier releases computed it: ids of events stored in the
// stream must not change.
func idBefore(account string, t events.Type, entity, stateKey string) string {
	h := sha256.New()
	for _, s := range []string{account, string(t), entity, stateKey} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func TestIDAsBefore(t *testing.T) {
	long := strings.Repeat("calls/812/participants/", 20) // past the stack buffer
	for _, c := range [][4]string{{"acme", "call.created", "calls/812", "e1/1"}, {"", "", "", ""},
		{"acme", "participant.status_changed", "calls/812/participants/4431", "3f9a0c21d7e4/5/9c1e07a2b4d3"},
		{"a\x00b", "t", long, long}} {
		if got, want := ID(c[0], events.Type(c[1]), c[2], c[3]), idBefore(c[0], events.Type(c[1]), c[2], c[3]); got != want {
			t.Errorf("ID%q = %s, earlier releases %s", c, got, want)
		}
	}
}
