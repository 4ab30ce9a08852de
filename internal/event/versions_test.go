package event

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// renameCall is a second version of call.created whose data names the call
// "record": a breaking change, published beside version 1.
func renameCall(data json.RawMessage) (json.RawMessage, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	d["record"] = d["call"]
	delete(d, "call")
	return json.Marshal(d)
}

func TestVersions(t *testing.T) {
	e, err := New("acme", events.CallCreated, "calls/812", "created", time.Date(2026, 11, 21, 10, 0, 3, 0, time.UTC), map[string]any{"call": map[string]int{"id": 812}})
	if err != nil {
		t.Fatal(err)
	}
	published := map[events.Type][]Version{events.CallCreated: {{N: 2, From: renameCall}}}

	if got, err := Versions(e, map[events.Type][]Version{}, VersionsAll); err != nil || len(got) != 1 || got[0].ID != e.ID {
		t.Fatalf("one version: %v %v", got, err)
	}
	all, err := Versions(e, published, VersionsAll)
	if err != nil || len(all) != 2 {
		t.Fatalf("all: %v %v", all, err)
	}
	v1, v2 := all[0], all[1]
	if v1.ID != e.ID || v1.DataSchema != events.DataSchema(events.CallCreated, 1) {
		t.Errorf("version 1 changed: %+v", v1)
	}
	if v2.ID == e.ID || len(v2.ID) != 32 || v2.DataSchema != events.DataSchema(events.CallCreated, 2) || !bytes.Equal(v2.Data, []byte(`{"record":{"id":812}}`)) {
		t.Errorf("version 2: %+v (data %s)", v2, v2.Data)
	}
	if v2.Subject != e.Subject || v2.Type != e.Type || !v2.Time.Equal(e.Time) {
		t.Errorf("version 2 is about another event: %+v", v2)
	}
	again, _ := Versions(e, published, VersionsAll)
	if again[1].ID != v2.ID {
		t.Errorf("version 2's id is not deterministic: %s, then %s", v2.ID, again[1].ID)
	}
	m1, err := Encode(v1, "callcenter", "acme")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Encode(v2, "callcenter", "acme")
	if err != nil {
		t.Fatal(err)
	}
	if m1.Subject != "callcenter.acme.call.created" || m2.Subject != "callcenter.acme.call.created.v2" {
		t.Errorf("subjects %s, %s", m1.Subject, m2.Subject)
	}
	decoded, err := events.Decode(m2.Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, unknown := decoded.(*events.UnknownEvent); !unknown {
		t.Errorf("events.Decode gave version 2 as %T: the Go types are version 1's", decoded)
	}

	for policy, want := range map[VersionChoice]string{VersionsNewest: v2.DataSchema, VersionsOldest: v1.DataSchema} {
		got, err := Versions(e, published, policy)
		if err != nil || len(got) != 1 || got[0].DataSchema != want {
			t.Errorf("%s: %v %v, want %s alone", policy, got, err, want)
		}
	}
	if _, err := Versions(e, published, "both"); err == nil {
		t.Error("an unknown policy passed")
	}
}
