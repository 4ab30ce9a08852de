package schemas

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// neverNull lists Go fields (package.Type.json_name) that could marshal to null by
// their type but never do, by construction of the producer: the schema may then
// declare them non-nullable. Each entry says why; the diff schema test checks it on
// the diff's own output.
var neverNull = map[string]string{
	"events.CallUpdatedData.changes": "call.updated is emitted only when a tracked field changed",
	"events.UserStatusData.changed":  "user.status_changed is emitted only when a status field changed",
	"events.Envelope.data":           "the data of every event is a JSON object (internal/event.New marshals a struct)",
	"events.WatermarkData.resources": "the poller makes the list, empty before any complete read (poll.watermarkData)",
}

func TestDrift(t *testing.T) {
	v := newValidator(t)
	d := &drift{}
	// The relay adds event.Truncation's attributes to the envelopes it reduces.
	type envelope struct {
		events.Envelope
		event.Truncation
	}
	d.object(reflect.TypeFor[envelope](), v.envelope, "envelope.json")
	for _, i := range events.Catalog {
		data := events.DataOf(i.Type) // the data type Decode gives the type
		if data == nil {
			t.Errorf("%s: no Go data type (events.DataOf)", i.Type)
			continue
		}
		gt := reflect.TypeOf(data).Elem()
		s, ok := v.data[events.DataSchema(i.Type, events.Version(i.Type))]
		file := fmt.Sprintf("data/%s.v%d.json", i.Type, events.Version(i.Type))
		if !ok {
			t.Errorf("%s: no schema %s", i.Type, file)
			continue
		}
		d.object(gt, s, file)
	}
	for _, key := range slices.Sorted(maps.Keys(neverNull)) {
		if !d.used[key] {
			d.problem("neverNull", "%s matches no Go field any more: remove it", key)
		}
	}
	for _, p := range d.problems {
		t.Error(p)
	}
}

// TestDriftDetects makes sure the drift check finds each kind of mismatch.
func TestDriftDetects(t *testing.T) {
	v := newValidator(t)
	type status struct {
		Code  string  `json:"code"`            // schema: integer
		Label string  `json:"label,omitempty"` // schema: required
		Extra int     `json:"extra"`           // schema: not declared
		Skip  float64 `json:"-"`
	}
	type participant struct {
		callParticipantFields
		CallerID int64  `json:"caller_id"` // schema: nullable
		Cost     *int64 `json:"cost"`      // schema: number
	}
	type wrapper struct {
		Current  []status  `json:"current"`  // schema: object
		Previous *status   `json:"previous"` // schema: not nullable
		Changed  []string  `json:"changed"`  // neverNull lists events.UserStatusData only
		User     *struct{} `json:"user,omitempty"`
		Part     int       `json:"participant"`
	}
	d := &drift{}
	d.object(reflect.TypeFor[status](), v.data[events.DataSchema("participant.status_changed", 1)].Properties["current"], "s")
	d.object(reflect.TypeFor[wrapper](), v.data[events.DataSchema("user.status_changed", 1)], "w")
	got := strings.Join(d.problems, "\n")
	for _, want := range []string{
		`s: /code (schemas.status.Code): Go emits [string], the schema allows [integer]`,
		`s: /label (schemas.status.Label): the schema requires it but Go omits it when empty`,
		`s: /extra (schemas.status.Extra): Go emits it but the schema does not declare it`,
		`w: /previous (schemas.wrapper.Previous): Go emits [null object], the schema allows [object]`,
		`w: /changed (schemas.wrapper.Changed): Go emits [array null]`,
		`w: /user (schemas.wrapper.User): the schema requires it but Go omits it when empty`,
		`w: /current (schemas.wrapper.Current): Go emits [array null], the schema allows [object]`,
		`w: /participant (schemas.wrapper.Part): Go emits it but the schema does not declare it`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing problem %q in:\n%s", want, got)
		}
	}
	d = &drift{}
	d.object(reflect.TypeFor[participant](), v.data[events.DataSchema("participant.joined", 1)].Properties["participant"], "p")
	got = strings.Join(d.problems, "\n")
	for _, want := range []string{
		`p: /caller_id (schemas.participant.CallerID): Go emits [integer], the schema allows [integer null]`,
		`p: /cost (schemas.participant.Cost): Go emits [integer null], the schema allows [null number]`,
		`p: /call_status: the schema declares it but Go never emits it`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing problem %q in:\n%s", want, got)
		}
	}
}

// callParticipantFields is embedded to check that promoted fields are walked.
type callParticipantFields struct {
	ID int64 `json:"id"`
}

// drift compares Go types with schemas, collecting problems.
type drift struct {
	problems []string
	used     map[string]bool // neverNull entries met
}

func (d *drift) problem(where, format string, args ...any) {
	d.problems = append(d.problems, where+": "+fmt.Sprintf(format, args...))
}

// goField is one JSON property of a Go struct.
type goField struct {
	name     string // JSON name
	goName   string // e.g. events.Call.Recording
	typ      reflect.Type
	optional bool // omitempty or omitzero: absent when empty
}

// fields lists the JSON properties encoding/json writes for struct t, following
// embedded structs.
func fields(t reflect.Type) []goField {
	var out []goField
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, fields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" })
		out = append(out, goField{name, t.String() + "." + f.Name, f.Type, optional})
	}
	return out
}

// object checks struct t against the object schema s: every property Go writes is
// declared with a compatible type, properties Go always writes are required and
// the others are not, and the schema declares nothing Go never writes.
func (d *drift) object(t reflect.Type, s *jsonschema.Schema, where string) {
	s = target(s)
	if s == nil {
		d.problem(where, "no object schema for %s", t)
		return
	}
	if b, ok := s.AdditionalProperties.(bool); ok && !b {
		d.problem(where, "additionalProperties is false: the schema must stay open to new optional fields")
	}
	emitted := map[string]bool{}
	for _, f := range fields(t) {
		emitted[f.name] = true
		at := where + ": /" + f.name + " (" + f.goName + ")"
		prop, ok := s.Properties[f.name]
		if !ok {
			d.problem(at, "Go emits it but the schema does not declare it")
			continue
		}
		required := slices.Contains(s.Required, f.name)
		switch {
		case f.optional && required:
			d.problem(at, "the schema requires it but Go omits it when empty")
		case !f.optional && !required:
			d.problem(at, "Go always emits it: the schema should require it")
		}
		// The type that declares the field (an embedded one for promoted fields).
		key := f.goName[:strings.LastIndex(f.goName, ".")] + "." + f.name
		d.value(f.typ, prop, at, where+"/"+f.name, f.optional, key)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if !emitted[name] {
			d.problem(where+": /"+name, "the schema declares it but Go never emits it")
		}
	}
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	rawType     = reflect.TypeFor[json.RawMessage]()
	marshalType = reflect.TypeFor[json.Marshaler]()
)

// value checks that the schema s of a property accepts exactly the JSON types Go
// writes for t: null for a pointer, slice or map unless omitted when empty (or
// listed in neverNull), a date-time string for time.Time, anything for raw JSON.
func (d *drift) value(t reflect.Type, s *jsonschema.Schema, at, where string, optional bool, key string) {
	nullable := false
	if !optional {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			nullable = true
		}
	}
	if why, ok := neverNull[key]; ok {
		if d.used == nil {
			d.used = map[string]bool{}
		}
		d.used[key] = true
		if !nullable {
			d.problem(at, "listed in neverNull (%s) but Go cannot emit null here anyway", why)
		}
		if key == "events.Envelope.data" {
			return
		}
		nullable = false
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	got := jsonTypes(s)
	var want []string
	switch {
	case t == rawType || (t != timeType && t.Implements(marshalType)):
		if len(got) > 0 {
			d.problem(at, "Go emits raw JSON of any type, the schema allows only %v", got)
		}
		return
	case t == timeType:
		want = []string{"string"}
		if s := target(s); s == nil || s.Format == nil || s.Format.Name != "date-time" {
			d.problem(at, "a time: the schema should say \"format\": \"date-time\"")
		}
	default:
		switch t.Kind() {
		case reflect.Bool:
			want = []string{"boolean"}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = []string{"integer"}
		case reflect.Float32, reflect.Float64:
			want = []string{"number"}
		case reflect.String:
			want = []string{"string"}
		case reflect.Struct, reflect.Map:
			want = []string{"object"}
		case reflect.Slice, reflect.Array:
			want = []string{"array"}
		default:
			d.problem(at, "Go type %s has no JSON mapping in the drift check", t)
			return
		}
	}
	if nullable {
		want = append(want, "null")
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		allows := fmt.Sprint(got)
		if got == nil {
			allows = "any type"
		}
		d.problem(at, "Go emits %v, the schema allows %s", want, allows)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if t != timeType {
			d.object(t, s, where)
		}
	case reflect.Slice, reflect.Array:
		items := target(s)
		if items == nil || items.Items2020 == nil {
			d.problem(at, "an array without an items schema")
			return
		}
		d.value(t.Elem(), items.Items2020, at+"[]", where+"/[]", false, "")
	}
}

// jsonTypes returns the sorted JSON types a property schema allows, following $ref
// and the alternatives of anyOf/oneOf, and the values of const and enum; nil when it
// allows any type.
func jsonTypes(s *jsonschema.Schema) []string {
	var out []string
	add := func(ty string) {
		if !slices.Contains(out, ty) {
			out = append(out, ty)
		}
	}
	for _, alt := range alternatives(s) {
		switch {
		case alt.Types != nil && !alt.Types.IsEmpty():
			for _, ty := range alt.Types.ToStrings() {
				add(ty)
			}
		case alt.Const != nil:
			add(valueType(*alt.Const))
		case alt.Enum != nil:
			for _, v := range alt.Enum.Values {
				add(valueType(v))
			}
		default:
			return nil
		}
	}
	slices.Sort(out)
	return out
}

// valueType is the JSON type of a decoded const or enum value.
func valueType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

// alternatives resolves $ref and splits anyOf/oneOf into the schemas a value may
// match.
func alternatives(s *jsonschema.Schema) []*jsonschema.Schema {
	for s.Ref != nil && s.Types == nil && len(s.Properties) == 0 {
		s = s.Ref
	}
	alts := append(slices.Clone(s.AnyOf), s.OneOf...)
	if len(alts) == 0 {
		return []*jsonschema.Schema{s}
	}
	var out []*jsonschema.Schema
	for _, a := range alts {
		out = append(out, alternatives(a)...)
	}
	return out
}

// target is the one alternative of s that describes an object or an array (the
// one with properties or items), or s itself.
func target(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	alts := alternatives(s)
	for _, a := range alts {
		if a.Types != nil && !slices.Equal(a.Types.ToStrings(), []string{"null"}) {
			return a
		}
	}
	return alts[0]
}
