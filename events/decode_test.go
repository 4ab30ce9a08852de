package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/schemas"
)

// TestDecodeExamples: the published sample of every type decodes to its typed
// event, and its data encodes back to the same JSON (the Go types are the wire
// shape, byte for byte).
func TestDecodeExamples(t *testing.T) {
	examples := schemas.Examples()
	if len(examples) == 0 {
		t.Fatal("no examples")
	}
	for f, body := range examples {
		ev, err := events.Decode(body)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, unknown := ev.(*events.UnknownEvent); unknown {
			t.Errorf("%s: decoded to *UnknownEvent", f)
			continue
		}
		var env events.Envelope
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(reflect.ValueOf(ev).Elem().FieldByName("Data").Interface())
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, env.Data); err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Errorf("%s: data re-encodes to\n%s\nwant\n%s", f, got, want.String())
		}
		if md := ev.Metadata(); md.ID != env.ID || md.Type != env.Type || md.Subject != env.Subject || !md.Time.Equal(env.Time) || md.Account() != "acme" {
			t.Errorf("%s: metadata %+v does not match the envelope", f, md)
		}
	}
}

// TestCatalogMatchesSchemas: every type of the Catalog has a schema and a typed
// event, and every schema has a type in the Catalog.
func TestCatalogMatchesSchemas(t *testing.T) {
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	var catalog []string
	for _, i := range events.Catalog {
		catalog = append(catalog, string(i.Type))
		if events.DataOf(i.Type) == nil {
			t.Errorf("%s: no typed event", i.Type)
		}
	}
	slices.Sort(catalog)
	if got := slices.Sorted(slices.Values(v.Types())); !slices.Equal(got, catalog) {
		t.Errorf("schemas have types %v, the Catalog %v", got, catalog)
	}
}

// body is a valid participant.status_changed envelope with one attribute replaced.
func body(attr, value string) []byte {
	attrs := map[string]string{
		"specversion": `"1.0"`, "id": `"e1"`, "source": `"urn:callbus:account:acme"`,
		"type": `"participant.status_changed"`, "subject": `"calls/1/participants/2"`,
		"time": `"2026-11-24T09:30:00Z"`, "datacontenttype": `"application/json"`,
		"data": `{"call_id":1,"participant":{"id":2},"previous":{"code":13,"label":"connecting"},"current":{"code":8,"label":"in progress"}}`,
	}
	if value == "" {
		delete(attrs, attr)
	} else {
		attrs[attr] = value
	}
	var parts []string
	for k, v := range attrs {
		parts = append(parts, `"`+k+`":`+v)
	}
	return []byte("{" + strings.Join(parts, ",") + "}")
}

func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct{ name, attr, value string }{
		{"specversion", "specversion", `"0.3"`},
		{"no id", "id", ""},
		{"no source", "source", ""},
		{"foreign source", "source", `"urn:other:acme"`},
		{"no type", "type", ""},
		{"no subject", "subject", ""},
		{"no time", "time", ""},
		{"bad time", "time", `"yesterday"`},
		{"datacontenttype", "datacontenttype", `"text/plain"`},
		{"data of the wrong shape", "data", `{"call_id":{"x":1}}`},
		{"not an object", "data", `[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := events.Decode(body(tc.attr, tc.value))
			if !errors.Is(err, events.ErrInvalid) {
				t.Fatalf("got %T %v, want an error wrapping ErrInvalid", ev, err)
			}
		})
	}
	if _, err := events.Decode([]byte("not json")); !errors.Is(err, events.ErrInvalid) {
		t.Fatalf("not JSON: got %v, want ErrInvalid", err)
	}
}

// TestDecodeUnknownType: a type added after this version decodes, with its data
// raw, so that a consumer can acknowledge it.
func TestDecodeUnknownType(t *testing.T) {
	ev, err := events.Decode(body("type", `"call.transcribed"`))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := ev.(*events.UnknownEvent)
	if !ok || u.Type != "call.transcribed" || !json.Valid(u.Data) || events.Known(u.Type) {
		t.Fatalf("got %#v, want *UnknownEvent of call.transcribed with its data", ev)
	}
}

type msg struct{ subject, body string }

func (m msg) Subject() string { return m.subject }
func (m msg) Data() []byte    { return []byte(m.body) }

func TestDecodeMsg(t *testing.T) {
	b := string(body("id", `"e1"`))
	if _, err := events.DecodeMsg(msg{"callcenter.acme.participant.status_changed", b}); err != nil {
		t.Fatalf("on its subject: %v", err)
	}
	for _, subject := range []string{"callcenter.acme.call.created", "callcenter.other.participant.status_changed"} {
		if _, err := events.DecodeMsg(msg{subject, b}); !errors.Is(err, events.ErrInvalid) {
			t.Errorf("on %s: got %v, want ErrInvalid", subject, err)
		}
	}
}

func TestSubjects(t *testing.T) {
	if got := events.Subject(events.DefaultPrefix, events.Any, events.CallEnded); got != "callcenter.*.call.ended" {
		t.Errorf("Subject with Any: got %s", got)
	}
	got := events.Filters("cc", "acme", events.CallCreated, events.UserStatusChanged)
	if want := []string{"cc.acme.call.created", "cc.acme.user.status_changed"}; !slices.Equal(got, want) {
		t.Errorf("Filters: got %v want %v", got, want)
	}
	if got := events.Filters("cc", "acme"); !slices.Equal(got, []string{"cc.acme.>"}) {
		t.Errorf("Filters of no type: got %v", got)
	}
	if a, ok := events.Account("urn:callbus:account:acme"); !ok || a != "acme" {
		t.Errorf("Account: got %q %v", a, ok)
	}
}

// TestDecodeReduced: the relay's marker of a reduced event reaches Meta, and its
// last-resort form (data {}) decodes, DataEmptied, with the entity in Subject.
func TestDecodeReduced(t *testing.T) {
	body := schemas.Examples()["call.ended"]
	var env map[string]any
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mark    string
		emptied bool
	}{{"/call/participants=2500", false}, {"=1300000", true}} {
		env["callbustruncated"], env["callbusoriginalsize"] = tc.mark, 1400000
		if tc.emptied {
			env["data"] = map[string]any{}
		}
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.mark, err)
		}
		md := ev.Metadata()
		if md.Truncated != tc.mark || md.DataEmptied() != tc.emptied || md.Subject != "calls/1000001" {
			t.Fatalf("%s: meta %+v, DataEmptied %v", tc.mark, md, md.DataEmptied())
		}
	}
}
