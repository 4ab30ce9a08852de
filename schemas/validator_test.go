package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func newValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTypesMatchCatalog(t *testing.T) {
	var want []string
	for _, i := range events.Catalog {
		want = append(want, string(i.Type))
	}
	slices.Sort(want)
	if got := newValidator(t).Types(); !slices.Equal(got, want) {
		t.Fatalf("data/*.json types %v\nwant the catalog %v", got, want)
	}
}

// validate runs Validate and checks that event.json, the one-file schema, agrees.
func validate(t *testing.T, v *Validator, body []byte) error {
	t.Helper()
	err := v.Validate(body)
	if doc, jerr := jsonschema.UnmarshalJSON(bytes.NewReader(body)); jerr == nil {
		if werr := v.whole.Validate(doc); (werr == nil) != (err == nil) {
			t.Errorf("event.json disagrees with Validate: %v vs %v", werr, err)
		}
	}
	return err
}

// TestWholeDispatchesEveryType: event.json has one block per data file, by type
// and dataschema, each naming the type of its file.
func TestWholeDispatchesEveryType(t *testing.T) {
	v := newValidator(t)
	var dispatched []string
	for _, s := range v.whole.AllOf {
		if s.If == nil || s.If.Properties["type"] == nil || s.If.Properties["type"].Const == nil {
			continue
		}
		typ := (*s.If.Properties["type"].Const).(string)
		ds := s.If.Properties["dataschema"]
		if ds == nil || ds.Const == nil {
			t.Errorf("event.json: the block of %s does not name its dataschema", typ)
			continue
		}
		uri := (*ds.Const).(string)
		if ft, _, ok := events.ParseDataSchema(uri); !ok || string(ft) != typ {
			t.Errorf("event.json: the block of %s names the dataschema %s", typ, uri)
		}
		dispatched = append(dispatched, uri)
	}
	slices.Sort(dispatched)
	if !slices.Equal(dispatched, v.DataSchemas()) {
		t.Fatalf("event.json dispatches %v, want %v", dispatched, v.DataSchemas())
	}
}

func TestSamplesValidate(t *testing.T) {
	v := newValidator(t)
	seen := map[events.Type]bool{}
	for _, s := range samples() {
		seen[s.typ] = true
		t.Run(string(s.typ)+"/"+s.name, func(t *testing.T) {
			if err := validate(t, v, s.body(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, i := range events.Catalog {
		if !seen[i.Type] {
			t.Errorf("no sample of %s", i.Type)
		}
	}
}

// mutate decodes body, applies f to the decoded object and encodes it again.
func mutate(t *testing.T, body []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func obj(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

func TestMutations(t *testing.T) {
	v := newValidator(t)
	call := samples()[0].body(t) // rich call.created
	tests := []struct {
		name    string
		f       func(m map[string]any)
		pointer string // "" when the body must stay valid
	}{
		{"unknown optional fields pass", func(m map[string]any) {
			m["traceparent"] = "x"
			obj(m, "data")["extra"] = 1
			obj(m, "data", "call")["new_api_field"] = []any{"x"}
		}, ""},
		{"call id as string", func(m map[string]any) { obj(m, "data", "call")["id"] = "812" }, "/data/call/id"},
		{"call id fractional", func(m map[string]any) { obj(m, "data", "call")["id"] = 8.5 }, "/data/call/id"},
		{"required field missing", func(m map[string]any) { delete(obj(m, "data", "call"), "assigned_agent_id") }, "/data/call"},
		{"non-nullable null", func(m map[string]any) { obj(m, "data", "call")["phone_number"] = nil }, "/data/call/phone_number"},
		{"nested participant", func(m map[string]any) {
			obj(m, "data", "call")["participants"].([]any)[0].(map[string]any)["call_status"] = "8"
		}, "/data/call/participants/0/call_status"},
		{"bad time format", func(m map[string]any) { obj(m, "data", "call")["created_time"] = "2026-11-21 10:00:03" }, "/data/call/created_time"},
		{"bad envelope time", func(m map[string]any) { m["time"] = "yesterday" }, "/time"},
		{"unknown event type", func(m map[string]any) { m["type"] = "call.deleted" }, "/type"},
		{"wrong specversion", func(m map[string]any) { m["specversion"] = "0.3" }, "/specversion"},
		{"bad id", func(m map[string]any) { m["id"] = "not-hex" }, "/id"},
		{"bad source", func(m map[string]any) { m["source"] = "urn:callbus:account:a.b" }, "/source"},
		{"subject of another entity", func(m map[string]any) { m["subject"] = "users/7" }, "/subject"},
		{"missing data", func(m map[string]any) { delete(m, "data") }, ""},
		{"wrong datacontenttype", func(m map[string]any) { m["datacontenttype"] = "text/plain" }, "/datacontenttype"},
		{"recording not an object", func(m map[string]any) { obj(m, "data", "call")["recording"] = "r" }, "/data/call/recording"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := validate(t, v, mutate(t, call, tc.f))
			if tc.name == "missing data" {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if tc.pointer == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var ee *EventError
			if !errors.As(err, &ee) {
				t.Fatalf("got %v, want an *EventError", err)
			}
			if !slices.ContainsFunc(ee.Violations, func(v Violation) bool { return v.Pointer == tc.pointer }) {
				t.Fatalf("violations %+v: none at %s", ee.Violations, tc.pointer)
			}
			if !strings.Contains(err.Error(), ee.ID) || !strings.Contains(err.Error(), tc.pointer) {
				t.Fatalf("message %q should name the id %s and the pointer %s", err, ee.ID, tc.pointer)
			}
		})
	}
}

func TestMutationsPerType(t *testing.T) {
	v := newValidator(t)
	for _, s := range samples() {
		t.Run(string(s.typ)+"/"+s.name, func(t *testing.T) {
			body := s.body(t)
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			for key := range obj(m, "data") {
				b := mutate(t, body, func(m map[string]any) { obj(m, "data")[key] = true })
				if err := validate(t, v, b); err == nil {
					t.Errorf("data/%s set to true: want an error", key)
				}
			}
		})
	}
}

func TestNotJSON(t *testing.T) {
	v := newValidator(t)
	for _, b := range []string{"", "{", `{"a":1} x`, "[]"} {
		if err := v.Validate([]byte(b)); err == nil {
			t.Errorf("Validate(%q): want an error", b)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	e := &EventError{ID: "abc", Type: "call.created", Violations: []Violation{
		{"/data/call/id", "got string, want integer"}, {"", "missing properties 'time'"},
		{"/a", "x"}, {"/b", "x"}, {"/c", "x"}, {"/d", "x"}, {"/e", "x"},
	}}
	want := `event "abc" (call.created): /data/call/id: got string, want integer; /: missing properties 'time'; /a: x; /b: x; /c: x; and 2 more`
	if e.Error() != want {
		t.Fatalf("got  %s\nwant %s", e.Error(), want)
	}
}

func TestValidateHeaders(t *testing.T) {
	v := newValidator(t)
	id := "0123456789abcdef0123456789abcdef"
	good := map[string][]string{"Nats-Msg-Id": {id}, "Content-Type": {"application/cloudevents+json"}, "Callbus-Outbox-Id": {"1700000000000-0"},
		"traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "tracestate": {"congo=t61rcWkgMzE"}, "X-Other": {"a"}}
	if err := v.ValidateHeaders(good); err != nil {
		t.Fatal(err)
	}
	withdrawn := maps.Clone(good)
	withdrawn["Nats-Msg-Id"] = []string{id + "~r2"} // published again after a withdrawal
	if err := v.ValidateHeaders(withdrawn); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		f       func(h map[string][]string)
		pointer string
	}{
		{"missing outbox id", func(h map[string][]string) { delete(h, "Callbus-Outbox-Id") }, ""},
		{"wrong content type", func(h map[string][]string) { h["Content-Type"] = []string{"application/json"} }, "/Content-Type"},
		{"bad msg id", func(h map[string][]string) { h["Nats-Msg-Id"] = []string{"x"} }, "/Nats-Msg-Id"},
		{"bad withdrawal count", func(h map[string][]string) { h["Nats-Msg-Id"] = []string{id + "~r0"} }, "/Nats-Msg-Id"},
		{"two values", func(h map[string][]string) { h["Nats-Msg-Id"] = []string{id, id} }, "/Nats-Msg-Id"},
		{"bad traceparent", func(h map[string][]string) { h["traceparent"] = []string{"00-xyz"} }, "/traceparent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string][]string{}
			for k, vs := range good {
				h[k] = vs
			}
			tc.f(h)
			var ee *EventError
			if err := v.ValidateHeaders(h); !errors.As(err, &ee) || !ee.Headers {
				t.Fatalf("got %v, want an *EventError about headers", err)
			}
			if !slices.ContainsFunc(ee.Violations, func(v Violation) bool { return v.Pointer == tc.pointer }) {
				t.Fatalf("violations %+v: none at %q", ee.Violations, tc.pointer)
			}
		})
	}
}

func TestValidateConcurrently(t *testing.T) {
	v := newValidator(t)
	var bodies [][]byte
	for _, s := range samples() {
		bodies = append(bodies, s.body(t))
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			var first error
			for _, b := range bodies {
				if err := v.Validate(b); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestLastResortForm: the relay's last-resort form of an oversized event (data
// {}, callbustruncated "=<bytes>") validates, in Validate and event.json alike;
// the same data without that marker, or under a marker of cut values, does not.
func TestLastResortForm(t *testing.T) {
	v := newValidator(t)
	for typ, body := range Examples() {
		t.Run(typ, func(t *testing.T) {
			emptied := func(mark string) []byte {
				return mutate(t, body, func(m map[string]any) {
					m["data"] = map[string]any{}
					if mark != "" {
						m["callbustruncated"], m["callbusoriginalsize"] = mark, 2000000
					}
				})
			}
			if err := validate(t, v, emptied("=1999000")); err != nil {
				t.Fatalf("last-resort form refused: %v", err)
			}
			for _, mark := range []string{"", "/call/participants=2500"} {
				if err := validate(t, v, emptied(mark)); err == nil {
					t.Fatalf("data {} with marker %q accepted", mark)
				}
			}
		})
	}
}

// TestDataSchema: the data is validated against the schema its dataschema names;
// one that names no data file of schemas/, or another type's, is a violation at
// /dataschema; without one (events of earlier releases), version 1 applies.
func TestDataSchema(t *testing.T) {
	v := newValidator(t)
	good := samples()[0].body(t)
	if err := validate(t, v, good); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(good, &obj); err != nil {
		t.Fatal(err)
	}
	delete(obj, "dataschema")
	legacy, _ := json.Marshal(obj)
	if err := validate(t, v, legacy); err != nil {
		t.Fatalf("an event without dataschema: %v", err)
	}
	for _, uri := range []string{events.DataSchema(events.CallCreated, 2), events.DataSchema(events.CallEnded, 1), "https://callbus.dev/schemas/envelope.json"} {
		obj["dataschema"] = uri
		b, _ := json.Marshal(obj)
		err := v.Validate(b)
		var ee *EventError
		if !errors.As(err, &ee) || !slices.ContainsFunc(ee.Violations, func(x Violation) bool { return x.Pointer == "/dataschema" }) {
			t.Errorf("dataschema %s: got %v, want a violation at /dataschema", uri, err)
		}
	}
}
