package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/secret"
)

var testKey = secret.New("0123456789abcdef-test-key")

func ptr(s string) *string { return &s }

func sampleCall() events.Call {
	return events.Call{ID: 1, AssignedAgentName: ptr("Yara Patel"), CallNotes: "customer asked about card 4111",
		Recording:         &events.Recording{URL: "https://rec.example.com/calls/1/r/9", TranscriptionURL: ptr("https://rec.example.com/t/9")},
		RecordingToRedact: &events.RecordingToRedact{URL: "https://rec.example.com/redact/9"},
		Participants: []events.Participant{{ID: 2, CallerNumber: ptr("+1 (555) 010-0142"), CallerName: ptr("Jane Roe")},
			{ID: 3}}, Raw: []byte(`{"raw":"Jane Roe"}`)}
}

func TestFieldActions(t *testing.T) {
	for _, tc := range []struct {
		path   string
		action Action
		get    func(events.Call) *string
		want   func(p *Policy) *string // nil: null
	}{
		{"calls.participants[].caller_number", Keep, func(c events.Call) *string { return c.Participants[0].CallerNumber }, func(*Policy) *string { return ptr("+1 (555) 010-0142") }},
		{"calls.participants[].caller_number", Hash, func(c events.Call) *string { return c.Participants[0].CallerNumber }, func(p *Policy) *string { return ptr(p.HashValue("+1 (555) 010-0142")) }},
		{"calls.participants[].caller_number", Mask, func(c events.Call) *string { return c.Participants[0].CallerNumber }, func(*Policy) *string { return ptr("***0142") }},
		{"calls.participants[].caller_number", Drop, func(c events.Call) *string { return c.Participants[0].CallerNumber }, func(*Policy) *string { return nil }},
		{"calls.participants[].caller_name", Mask, func(c events.Call) *string { return c.Participants[0].CallerName }, func(*Policy) *string { return ptr("J***") }},
		{"calls.call_notes", Drop, func(c events.Call) *string { return &c.CallNotes }, func(*Policy) *string { return ptr("") }},
		{"calls.call_notes", Mask, func(c events.Call) *string { return &c.CallNotes }, func(*Policy) *string { return ptr("***") }},
		{"calls.recording.url", Mask, func(c events.Call) *string { return &c.Recording.URL }, func(*Policy) *string { return ptr("https://rec.example.com/***") }},
		{"calls.recording.transcription_url", Drop, func(c events.Call) *string { return c.Recording.TranscriptionURL }, func(*Policy) *string { return nil }},
		{"calls.recording_to_redact.url", Hash, func(c events.Call) *string { return &c.RecordingToRedact.URL }, func(p *Policy) *string { return ptr(p.HashValue("https://rec.example.com/redact/9")) }},
		{"calls.assigned_agent_name", Drop, func(c events.Call) *string { return c.AssignedAgentName }, func(*Policy) *string { return nil }},
	} {
		t.Run(fmt.Sprintf("%s=%s", tc.path, tc.action), func(t *testing.T) {
			p, err := New(Rules{Fields: map[string]Action{tc.path: tc.action}}, testKey, "acme")
			if err != nil {
				t.Fatal(err)
			}
			c := sampleCall()
			p.Redact(&c)
			got, want := tc.get(c), tc.want(p)
			switch {
			case (got == nil) != (want == nil):
				t.Fatalf("got %v, want %v", got, want)
			case got != nil && *got != *want:
				t.Fatalf("got %q, want %q", *got, *want)
			}
			if tc.action != Keep && c.Raw != nil {
				t.Error("Raw kept: it holds every value")
			}
			if c.Participants[1].CallerNumber != nil {
				t.Error("an agent's null caller_number changed")
			}
		})
	}
}

func TestUserFields(t *testing.T) {
	p, err := New(Rules{Fields: map[string]Action{"users.email": Mask, "users.phone": Hash, "users.name": Drop}}, testKey, "acme")
	if err != nil {
		t.Fatal(err)
	}
	u := events.User{ID: 8, Name: "Yara Patel", Email: "yara@acme.example", Phone: "+44 20 7946 0958"}
	p.Redact(&u)
	if u.Name != "" || u.Email != "***@acme.example" || u.Phone != p.HashValue("+44 20 7946 0958") {
		t.Fatalf("got %q %q %q", u.Name, u.Email, u.Phone)
	}
}

func TestHashJoinsWithinAccountOnly(t *testing.T) {
	a, _ := New(Rules{Preset: PresetNoPersonalData}, testKey, "acme")
	a2, _ := New(Rules{Preset: PresetNoPersonalData}, testKey, "acme")
	b, _ := New(Rules{Preset: PresetNoPersonalData}, secret.New("another-account-key-0123"), "acme")
	if a.HashValue("+15550100") != a2.HashValue(" +15550100 ") {
		t.Error("the same value hashes differently within an account")
	}
	if a.HashValue("+15550100") == b.HashValue("+15550100") {
		t.Error("two accounts' keys hash alike")
	}
	other, _ := New(Rules{Preset: PresetNoPersonalData}, testKey, "beta")
	if a.HashValue("+15550100") == other.HashValue("+15550100") {
		t.Error("two accounts given the same key hash alike")
	}
	if !strings.HasPrefix(a.HashValue("x"), HashPrefix) || len(a.HashValue("x")) != len(HashPrefix)+64 {
		t.Errorf("hash form %q", a.HashValue("x"))
	}
}

func TestPresetCoversEveryField(t *testing.T) {
	p, err := New(Rules{Preset: PresetNoPersonalData}, testKey, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Fields {
		if p.ActionOf(f.Path) == Keep || p.ActionOf(f.Path) == Mask {
			t.Errorf("%s: %s under %s, want hash or drop", f.Path, p.ActionOf(f.Path), PresetNoPersonalData)
		}
	}
	c := sampleCall()
	p.Redact(&c)
	// The values as JSON, not %+v: that prints pointers, whose addresses may hold
	// any of the digits looked for.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b) + " " + string(c.Raw)
	for _, v := range []string{"Yara", "Jane", "0142", "4111", "rec.example.com"} {
		if strings.Contains(s, v) {
			t.Errorf("%q left in %s", v, s)
		}
	}
	q, _ := New(Rules{Preset: PresetNoPersonalData, Fields: map[string]Action{"users.email": Keep}}, testKey, "acme")
	if q.ActionOf("users.email") != Keep || q.Version() == p.Version() {
		t.Error("a field given keeps over the preset, with a version of its own")
	}
}

func TestEventTypes(t *testing.T) {
	for _, tc := range []struct {
		pats []string
		want map[events.Type]bool
	}{
		{nil, map[events.Type]bool{events.CallCreated: true, events.UserUpdated: true}},
		{[]string{"call.*", "metric.finalized"}, map[events.Type]bool{events.CallCreated: true, events.CallEnded: true,
			events.MetricFinalized: true, events.MetricUpdated: false, events.UserUpdated: false, events.ParticipantJoined: false}},
		{[]string{"-user.status_changed"}, map[events.Type]bool{events.UserStatusChanged: false, events.UserUpdated: true, events.CallCreated: true}},
		{[]string{"user.*", "-user.status_changed"}, map[events.Type]bool{events.UserStatusChanged: false, events.UserUpdated: true, events.CallCreated: false}},
	} {
		p, err := New(Rules{Events: tc.pats}, secret.Value{}, "acme")
		if err != nil {
			t.Fatal(err)
		}
		for typ, want := range tc.want {
			if got := p.Wants(typ); got != want {
				t.Errorf("%v: Wants(%s) = %v, want %v", tc.pats, typ, got, want)
			}
		}
	}
}

func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       Rules
		key     secret.Value
		setting string
	}{
		{"unknown field", Rules{Fields: map[string]Action{"calls.nope": Drop}}, testKey, "fields"},
		{"unknown action", Rules{Fields: map[string]Action{"users.email": "encrypt"}}, testKey, "fields"},
		{"unknown preset", Rules{Preset: "gdpr"}, testKey, "preset"},
		{"unknown type", Rules{Events: []string{"call.deleted"}}, testKey, "events"},
		{"hash without key", Rules{Fields: map[string]Action{"users.email": Hash}}, secret.Value{}, "hash_key"},
		{"short key", Rules{Preset: PresetNoPersonalData}, secret.New("short"), "hash_key"},
	} {
		_, err := New(tc.r, tc.key, "acme")
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Setting != tc.setting {
			t.Errorf("%s: got %v, want a problem with %s", tc.name, err, tc.setting)
		}
	}
}

func TestVersion(t *testing.T) {
	none, _ := New(Rules{}, secret.Value{}, "acme")
	if none.Version() != "" || (*Policy)(nil).Version() != "" {
		t.Error("a policy that changes nothing has a version")
	}
	p, _ := New(Rules{Preset: PresetNoPersonalData}, testKey, "acme")
	rotated, _ := New(Rules{Preset: PresetNoPersonalData}, secret.New("0123456789abcdef-rotated"), "acme")
	if p.Version() == "" || p.Version() == rotated.Version() {
		t.Errorf("versions %q and %q: a rotated key must give a new one", p.Version(), rotated.Version())
	}
	if strings.Contains(p.String()+p.Version(), testKey.Reveal()) {
		t.Error("the key shows in the policy's description")
	}
}

func TestMaskValue(t *testing.T) {
	for _, tc := range []struct {
		k       Kind
		in, out string
	}{
		{KindPhone, "+1 555 010 0142", "***0142"}, {KindPhone, "12345", "***"},
		{KindEmail, "a@b.example", "***@b.example"}, {KindEmail, "nope", "***"},
		{KindName, " Élodie", "É***"}, {KindName, "123", "***"},
		{KindURL, "https://h.example/x?y", "https://h.example/***"}, {KindURL, "not a url", "***"},
		{KindText, "anything", "***"},
	} {
		if got := MaskValue(tc.k, tc.in); got != tc.out {
			t.Errorf("MaskValue(%s, %q) = %q, want %q", tc.k, tc.in, got, tc.out)
		}
	}
}

func TestObserverCounts(t *testing.T) {
	p, _ := New(Rules{Preset: PresetNoPersonalData}, testKey, "acme")
	n := map[Action]int{}
	p = p.WithObserver(func(_ string, a Action) { n[a]++ })
	c := sampleCall()
	p.Redact(&c)
	if n[Hash] != 3 || n[Drop] != 4 {
		t.Errorf("counted %v, want 3 hashed (agent, number, name), 4 dropped", n)
	}
}
