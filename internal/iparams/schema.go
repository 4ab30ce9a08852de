package iparams

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SchemaDraft is the JSON Schema dialect JSONSchema writes: draft-07, the one Helm
// validates values.schema.json with.
const SchemaDraft = "http://json-schema.org/draft-07/schema#"

// JSONSchema describes a values object for the declarations (a Helm chart's values,
// or a --config file) as a draft-07 JSON Schema: one property per key, in
// declaration order, with its title, description, type, enum, pattern(s), bounds,
// format and default. Unknown keys are refused. Secure properties are marked
// writeOnly, never get a default, and are not listed as required (a chart may take
// them from an existing Secret instead). The output is indented and ends with a
// newline.
func JSONSchema(d *Declarations) []byte {
	props := obj{}
	var required []string
	for _, p := range d.params {
		props = append(props, kv{p.Key, propertySchema(p)})
		if p.Required && !p.Secure && p.Default == nil {
			required = append(required, p.Key)
		}
	}
	root := obj{
		{"$schema", SchemaDraft},
		{"title", "installation parameters"},
		{"type", "object"},
		{"additionalProperties", false},
	}
	if len(required) > 0 {
		root = append(root, kv{"required", required})
	}
	root = append(root, kv{"properties", props})
	compact, err := root.MarshalJSON()
	if err != nil {
		panic("iparams: marshal schema: " + err.Error()) // strings, numbers and bools only
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		panic("iparams: indent schema: " + err.Error())
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func propertySchema(p Param) obj {
	s := obj{{"title", p.DisplayName}}
	if p.Description != "" {
		s = append(s, kv{"description", p.Description})
	}
	switch p.Type {
	case Checkbox:
		s = append(s, kv{"type", "boolean"})
	case Number:
		s = append(s, kv{"type", "integer"}, kv{"minimum", -9999999999}, kv{"maximum", 9999999999})
		if p.Min != nil {
			s[len(s)-2] = kv{"minimum", *p.Min}
		}
		if p.Max != nil {
			s[len(s)-1] = kv{"maximum", *p.Max}
		}
	case Multiselect:
		s = append(s, kv{"type", "array"}, kv{"items", obj{{"type", "string"}, {"enum", p.Options}}},
			kv{"uniqueItems", true})
	default:
		s = append(s, kv{"type", "string"})
		s = append(s, stringRules(p)...)
	}
	pats := patterns(p)
	switch {
	case len(pats) == 1 && p.Type != Multiselect:
		s = append(s, kv{"pattern", pats[0]})
	case len(pats) > 0:
		all := make([]obj, len(pats))
		for i, pat := range pats {
			all[i] = obj{{"pattern", pat}}
			if p.Type == Multiselect {
				all[i] = obj{{"items", all[i]}}
			}
		}
		s = append(s, kv{"allOf", all})
	}
	if p.Secure {
		s = append(s, kv{"writeOnly", true})
	} else if p.Default != nil {
		s = append(s, kv{"default", p.Default})
	}
	return s
}

// stringRules are the schema keywords of a string type's own rules.
func stringRules(p Param) obj {
	switch p.Type {
	case Dropdown, Radio:
		return obj{{"enum", p.Options}}
	case Email:
		return obj{{"format", "email"}}
	case URL:
		return obj{{"format", "uri"}}
	case Date:
		return obj{{"format", "date"}}
	case APIKey:
		return obj{{"minLength", 1}}
	}
	return nil
}

// patterns are the type's own pattern, if it has one, and the regex rules'.
func patterns(p Param) []string {
	var out []string
	switch p.Type {
	case Text:
		out = append(out, `^[^\r\n]*$`)
	case URL:
		out = append(out, `^[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]`)
	case Date:
		out = append(out, `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	case PhoneNumber:
		out = append(out, `^\+?[0-9 ().-]{7,}$`)
	case Domain:
		out = append(out, `^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	case APIKey:
		out = append(out, `^\S+$`)
	}
	for _, r := range p.Regex {
		out = append(out, r.Pattern.String())
	}
	return out
}

// Member is one key and value of an OrderedObject.
type Member struct {
	Key   string
	Value any
}

// OrderedObject is a JSON object that keeps its members in order and does not
// escape HTML, so generated schemas read in declaration order with readable
// patterns and descriptions (<account>). The Helm chart's schema uses it too.
type OrderedObject []Member

// kv and obj are the short names used in this file.
type (
	kv  = Member
	obj = OrderedObject
)

// MarshalJSON writes the members in order.
func (o OrderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(m.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so that patterns stay readable.
func marshal(v any) ([]byte, error) {
	if o, ok := v.(obj); ok {
		return o.MarshalJSON()
	}
	if list, ok := v.([]obj); ok {
		var b bytes.Buffer
		b.WriteByte('[')
		for i, o := range list {
			if i > 0 {
				b.WriteByte(',')
			}
			j, err := o.MarshalJSON()
			if err != nil {
				return nil, err
			}
			b.Write(j)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
