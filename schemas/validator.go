package schemas

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/callbus/callbus/events"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// baseURL names the embedded files for the compiler: the base of every
// dataschema URI, so that a data file's name is the dataschema of the events it
// describes. It is never fetched: every file is added as a resource before
// compiling and remote loading is disabled.
const baseURL = events.SchemaBase

// Validator checks event bodies against the embedded schemas. It is safe for
// concurrent use.
type Validator struct {
	envelope *jsonschema.Schema
	whole    *jsonschema.Schema // event.json: compiled so its $refs are checked
	headers  *jsonschema.Schema
	data     map[string]*jsonschema.Schema // by dataschema URI (events.DataSchema)
	types    []string                      // sorted, each once whatever its versions
}

// New compiles the embedded schemas with format assertions on (so "date-time" is
// checked). It fails if a file does not compile, a $ref does not resolve, a data
// file is not named <type>.v<N>.json, a type has no version 1, or the envelope's
// list of types and the data/ files disagree.
func New() (*Validator, error) { return NewFS(files) }

// NewFS is New for the schema files of fsys, laid out as the embedded ones (FS):
// for a contract with files of its own, such as a test's second version of a type.
func NewFS(fsys fs.FS) (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noRemote{})
	var dataFiles []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if strings.HasPrefix(p, "data/") {
			dataFiles = append(dataFiles, p)
		}
		return c.AddResource(baseURL+p, doc)
	})
	if err != nil {
		return nil, fmt.Errorf("schemas: load: %w", err)
	}
	v := &Validator{data: map[string]*jsonschema.Schema{}}
	if v.envelope, err = c.Compile(baseURL + "envelope.json"); err != nil {
		return nil, fmt.Errorf("schemas: compile envelope: %w", err)
	}
	if v.whole, err = c.Compile(baseURL + "event.json"); err != nil {
		return nil, fmt.Errorf("schemas: compile event.json: %w", err)
	}
	if v.headers, err = c.Compile(baseURL + "headers.json"); err != nil {
		return nil, fmt.Errorf("schemas: compile headers: %w", err)
	}
	for _, p := range dataFiles {
		uri := baseURL + p
		t, _, ok := events.ParseDataSchema(uri)
		if !ok {
			return nil, fmt.Errorf("schemas: %s: name a data schema data/<type>.v<N>.json (N the version of the type's data, from 1)", p)
		}
		if v.data[uri], err = c.Compile(uri); err != nil {
			return nil, fmt.Errorf("schemas: compile %s: %w", p, err)
		}
		v.types = append(v.types, string(t))
	}
	slices.Sort(v.types)
	v.types = slices.Compact(v.types)
	for _, t := range v.types {
		if v.data[events.DataSchema(events.Type(t), 1)] == nil {
			return nil, fmt.Errorf("schemas: %s has no version 1 (data/%s.v1.json)", t, t)
		}
	}
	if enum := envelopeTypes(v.envelope); !slices.Equal(enum, v.types) {
		return nil, fmt.Errorf("schemas: envelope.json lists types %v, data/ has %v", enum, v.types)
	}
	return v, nil
}

// Types returns the event types that have a data schema, sorted, each once.
func (v *Validator) Types() []string { return slices.Clone(v.types) }

// DataSchemas returns the dataschema URI of every data file, sorted.
func (v *Validator) DataSchemas() []string {
	out := make([]string, 0, len(v.data))
	for uri := range v.data {
		out = append(out, uri)
	}
	slices.Sort(out)
	return out
}

// Validate checks one message body: the envelope against envelope.json and, when
// its type is known, its data against the schema its dataschema names
// (data/<type>.v<N>.json; version 1 when it has none, as events of earlier
// releases), but for an event in the relay's last-resort form (callbustruncated
// "=<bytes>": its data is {}). A dataschema that names no data file of schemas/,
// or another type's, is a violation at /dataschema. It returns nil, an error for
// a body that is not JSON, or an *EventError listing every violation with its
// JSON pointer in the body (e.g. "/data/call/id").
func (v *Validator) Validate(body []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("event body is not JSON: %w", err)
	}
	obj, _ := doc.(map[string]any)
	id, _ := obj["id"].(string)
	typ, _ := obj["type"].(string)
	var vs []Violation
	if err := v.envelope.Validate(doc); err != nil {
		vs = append(vs, violations(err, "")...)
	}
	uri, _ := obj["dataschema"].(string)
	if uri == "" && slices.Contains(v.types, typ) {
		uri = events.DataSchema(events.Type(typ), 1)
	} else if t, _, _ := events.ParseDataSchema(uri); uri != "" && (v.data[uri] == nil || string(t) != typ) {
		vs = append(vs, Violation{Pointer: "/dataschema", Message: fmt.Sprintf("%q names no data schema of type %q in schemas/data", uri, typ)})
	}
	if s, ok := v.data[uri]; ok && !lastResort(obj) {
		if data, ok := obj["data"]; ok {
			if err := s.Validate(data); err != nil {
				vs = append(vs, violations(err, "/data")...)
			}
		}
	}
	if len(vs) == 0 {
		return nil
	}
	return &EventError{ID: id, Type: typ, Violations: sorted(vs)}
}

// lastResort tells whether body (decoded) is an event the relay emptied the data
// of because it did not fit even cut (callbustruncated "=<bytes of data>").
func lastResort(body map[string]any) bool {
	mark, _ := body["callbustruncated"].(string)
	return strings.HasPrefix(mark, "=")
}

// ValidateHeaders checks the NATS headers of a message against headers.json. Each
// header must have one value. It returns nil or an *EventError (with Headers set)
// whose pointers name the headers, e.g. "/Nats-Msg-Id".
func (v *Validator) ValidateHeaders(h map[string][]string) error {
	doc := make(map[string]any, len(h))
	for k, vals := range h {
		if len(vals) == 1 {
			doc[k] = vals[0]
			continue
		}
		list := make([]any, len(vals))
		for i, s := range vals {
			list[i] = s
		}
		doc[k] = list
	}
	err := v.headers.Validate(doc)
	if err == nil {
		return nil
	}
	id, _ := doc["Nats-Msg-Id"].(string)
	return &EventError{ID: id, Headers: true, Violations: sorted(violations(err, ""))}
}

// envelopeTypes is the sorted enum of the envelope's type property.
func envelopeTypes(env *jsonschema.Schema) []string {
	var out []string
	if p := env.Properties["type"]; p != nil && p.Enum != nil {
		for _, v := range p.Enum.Values {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out
}

// violations flattens a validation error to its leaves, each at the JSON pointer of
// the failing value, prefixed with prefix.
func violations(err error, prefix string) []Violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Pointer: prefix, Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.Error()
			if o := e.BasicOutput(); o.Error != nil {
				msg = o.Error.String()
			}
			out = append(out, Violation{Pointer: prefix + pointer(e.InstanceLocation), Message: msg})
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// sorted orders violations by pointer and message, without repeats.
func sorted(vs []Violation) []Violation {
	slices.SortFunc(vs, func(a, b Violation) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Message, b.Message))
	})
	return slices.Compact(vs)
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer is the JSON pointer (RFC 6901) of a token path.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscaper.Replace(t))
	}
	return b.String()
}

// noRemote refuses to load anything: every schema is embedded.
type noRemote struct{}

func (noRemote) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas: %s is not embedded (remote loading is disabled)", url)
}
