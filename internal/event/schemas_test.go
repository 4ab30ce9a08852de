package event

import (
	"reflect"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// An Encoder gives the message Encode gives, for every type of the Catalog at
// its current version, at another version (its dataschema and subject follow
// the version), without a dataschema, and for a type outside the Catalog.
func TestEncoderIsEncode(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 30, 0, 5, time.UTC)
	enc := NewEncoder("callcenter", "acme")
	var envs []events.Envelope
	for _, i := range events.Catalog {
		e, err := New("acme", i.Type, "calls/1", "k/1", at, map[string]int{"n": 1})
		if err != nil {
			t.Fatal(err)
		}
		if e.DataSchema != events.DataSchema(i.Type, events.Version(i.Type)) {
			t.Fatalf("%s: dataschema %q, want %q", i.Type, e.DataSchema, events.DataSchema(i.Type, events.Version(i.Type)))
		}
		v2 := e
		v2.DataSchema = events.DataSchema(i.Type, events.Version(i.Type)+1)
		none := e
		none.DataSchema = ""
		envs = append(envs, e, v2, none)
	}
	other, err := New("acme", events.Type("call.other"), "calls/1", "k/1", at, map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	envs = append(envs, other)
	for _, e := range envs {
		want, werr := Encode(e, "callcenter", "acme")
		got, gerr := enc.Encode(e)
		if werr != nil || gerr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s (%s): Encoder %+v %v, Encode %+v %v", e.Type, e.DataSchema, got, gerr, want, werr)
		}
	}
	if m, _ := enc.Encode(envs[1]); m.Subject != "callcenter.acme.call.created.v2" {
		t.Fatalf("subject of version 2: %q", m.Subject)
	}
}
