package contract

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Kind is a kind of breaking change.
type Kind string

// The breaking changes the gate fails on.
const (
	FieldRemoved   Kind = "field removed or renamed"
	TypeNarrowed   Kind = "type narrowed"
	MadeRequired   Kind = "field made required"
	EnumRemoved    Kind = "enum value removed or renamed"
	TypeRenamed    Kind = "event type renamed or removed"
	SubjectRenamed Kind = "subject renamed"
)

// Change is one breaking change: what it is about (an event type and version,
// "call.created v1", or a file, "envelope.json", "asyncapi.yaml"), where (a JSON
// pointer into the schema with its $refs resolved, or into the AsyncAPI document),
// its kind and what changed.
type Change struct {
	About   string
	Pointer string
	Kind    Kind
	Detail  string
}

func (c Change) String() string {
	return fmt.Sprintf("%s %s: %s: %s", c.About, cmpPointer(c.Pointer), c.Kind, c.Detail)
}

func cmpPointer(p string) string {
	if p == "" {
		return "(whole)"
	}
	return p
}

// Compare returns every breaking change from the released contract to the current
// one, each a directory laid out as schemas/ (envelope.json, headers.json,
// data/<type>.v<N>.json, defs/, asyncapi.yaml). skip names a directory of current
// to ignore (the baseline kept inside it). It fails only when a file cannot be
// read or a $ref does not resolve.
func Compare(released, current fs.FS, skip string) ([]Change, error) {
	old, err := loadTree(released, "")
	if err != nil {
		return nil, fmt.Errorf("contract: released: %w", err)
	}
	cur, err := loadTree(current, skip)
	if err != nil {
		return nil, fmt.Errorf("contract: current: %w", err)
	}
	c := &comparer{old: old, cur: cur}
	files := make([]string, 0, len(old))
	for f := range old {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		about, ok := aboutFile(f)
		if !ok {
			continue // event.json: envelope and data dispatched by type, compared as those
		}
		if _, ok := cur[f]; !ok {
			kind, detail := TypeRenamed, f+" is gone: a version of a type stays published until its deprecation window ends"
			if !strings.HasPrefix(f, "data/") {
				kind, detail = FieldRemoved, f+" is gone"
			}
			c.add(about, "", kind, "%s", detail)
			continue
		}
		if err := c.schema(about, f, old[f], f, cur[f], "", 0); err != nil {
			return nil, fmt.Errorf("contract: %s: %w", f, err)
		}
	}
	changes, err := compareAsyncAPI(released, current)
	if err != nil {
		return nil, fmt.Errorf("contract: asyncapi.yaml: %w", err)
	}
	return append(c.changes, changes...), nil
}

// aboutFile names what a file of the contract is about in a Change: "call.created
// v1" for data/call.created.v1.json, the file otherwise. It is false for the files
// not compared on their own: event.json (the envelope and the data files in one)
// and defs/ (compared where the data files $ref them, as part of each type).
func aboutFile(f string) (string, bool) {
	switch {
	case f == "event.json", strings.HasPrefix(f, "defs/"):
		return "", false
	case strings.HasPrefix(f, "data/"):
		name := strings.TrimSuffix(path.Base(f), ".json")
		if i := strings.LastIndex(name, ".v"); i > 0 {
			return name[:i] + " " + name[i+1:], true
		}
		return name, true
	}
	return f, true
}

type comparer struct {
	old, cur tree
	changes  []Change
}

func (c *comparer) add(about, ptr string, k Kind, format string, args ...any) {
	c.changes = append(c.changes, Change{About: about, Pointer: ptr, Kind: k, Detail: fmt.Sprintf(format, args...)})
}

// maxDepth bounds the nesting compared: a recursive schema ends there.
const maxDepth = 64

// schema compares the released schema o (in file of) with the current n (in nf),
// both at pointer ptr of the type's data.
func (c *comparer) schema(about, of string, o any, nf string, n any, ptr string, depth int) error {
	if depth > maxDepth {
		return nil
	}
	of, o, err := c.old.deref(of, o)
	if err != nil {
		return fmt.Errorf("released %s: %w", ptr, err)
	}
	nf, n, err = c.cur.deref(nf, n)
	if err != nil {
		return fmt.Errorf("current %s: %w", ptr, err)
	}
	om, _ := o.(map[string]any)
	nm, _ := n.(map[string]any)
	if nm == nil {
		return nil // true, or not a schema: accepts anything
	}
	if om == nil {
		om = map[string]any{}
	}
	c.types(about, ptr, om, nm)
	c.values(about, ptr, om, nm)
	c.bounds(about, ptr, om, nm)
	if nm["additionalProperties"] == false && om["additionalProperties"] != false {
		c.add(about, ptr, TypeNarrowed, "additionalProperties false: properties unknown to the new schema are refused")
	}
	oreq, nreq := stringSet(om["required"]), stringSet(nm["required"])
	for _, r := range sortedKeys(nreq) {
		if !oreq[r] {
			c.add(about, child(child(ptr, "properties"), r), MadeRequired, "%q is required now", r)
		}
	}
	for _, r := range sortedKeys(oreq) {
		// Required means callbus always sends it: consumers rely on it.
		if !nreq[r] {
			c.add(about, child(child(ptr, "properties"), r), FieldRemoved, "%q is no longer required: it may be absent", r)
		}
	}
	oprops, _ := om["properties"].(map[string]any)
	nprops, _ := nm["properties"].(map[string]any)
	for _, name := range sortedKeys(oprops) {
		p := child(child(ptr, "properties"), name)
		np, ok := nprops[name]
		if !ok {
			c.add(about, p, FieldRemoved, "%q is gone", name)
			continue
		}
		if err := c.schema(about, of, oprops[name], nf, np, p, depth+1); err != nil {
			return err
		}
	}
	for _, k := range []string{"items", "if", "then", "else", "not", "additionalProperties"} {
		nv, ok := nm[k]
		if !ok {
			continue
		}
		ov, ok := om[k]
		if !ok {
			if k == "items" || k == "additionalProperties" {
				ov = map[string]any{} // anything was accepted there
			} else {
				continue // a new if/then: its constraints show in allOf
			}
		}
		if err := c.schema(about, of, ov, nf, nv, child(ptr, k), depth+1); err != nil {
			return err
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		ol, _ := om[k].([]any)
		nl, _ := nm[k].([]any)
		for i := range nl {
			p := child(ptr, k) + fmt.Sprintf("/%d", i)
			if i >= len(ol) {
				if k == "allOf" && !c.onlyNewTypes(nf, nl[i]) {
					c.add(about, p, TypeNarrowed, "a new allOf entry adds constraints")
				}
				continue
			}
			if err := c.schema(about, of, ol[i], nf, nl[i], p, depth+1); err != nil {
				return err
			}
		}
		if k != "allOf" && len(nl) < len(ol) {
			c.add(about, child(ptr, k), TypeNarrowed, "%d alternatives, were %d", len(nl), len(ol))
		}
	}
	return nil
}

// types reports JSON types the released schema accepted and the current refuses.
func (c *comparer) types(about, ptr string, om, nm map[string]any) {
	nt := typeList(nm["type"])
	if nt == nil {
		return
	}
	ot := typeList(om["type"])
	if ot == nil {
		c.add(about, child(ptr, "type"), TypeNarrowed, "any JSON type → %s", strings.Join(nt, ", "))
		return
	}
	for _, t := range ot {
		if !slices.Contains(nt, t) && !(t == "integer" && slices.Contains(nt, "number")) {
			c.add(about, child(ptr, "type"), TypeNarrowed, "%s → %s (%s refused)", strings.Join(ot, ", "), strings.Join(nt, ", "), t)
		}
	}
}

// values reports enum values removed, a const added or changed, a pattern or a
// format added or changed.
func (c *comparer) values(about, ptr string, om, nm map[string]any) {
	if ne, ok := nm["enum"].([]any); ok {
		oe, had := om["enum"].([]any)
		if !had {
			c.add(about, child(ptr, "enum"), TypeNarrowed, "an enum now: only %s", jsonText(ne))
		}
		kind := EnumRemoved
		if about == "envelope.json" && ptr == "/properties/type" {
			kind = TypeRenamed
		}
		for _, v := range oe {
			if !slices.ContainsFunc(ne, func(x any) bool { return jsonText(x) == jsonText(v) }) {
				c.add(about, child(ptr, "enum"), kind, "%s is gone", jsonText(v))
			}
		}
	}
	if nv, ok := nm["const"]; ok {
		if ov, had := om["const"]; !had || jsonText(ov) != jsonText(nv) {
			c.add(about, child(ptr, "const"), TypeNarrowed, "const %s, was %s", jsonText(nv), jsonText(ov))
		}
	}
	for _, k := range []string{"pattern", "format"} {
		nv, ok := nm[k]
		if !ok || jsonText(om[k]) == jsonText(nv) {
			continue
		}
		kind := TypeNarrowed
		if about == "envelope.json" && strings.Contains(ptr, "/properties/subject") {
			kind = SubjectRenamed
		}
		if k == "pattern" && widened(om[k], nv) {
			continue // every string the old pattern's alternatives matched still matches
		}
		c.add(about, child(ptr, k), kind, "%s %s, was %s", k, jsonText(nv), jsonText(om[k]))
	}
}

// bounds reports a lower bound raised or added and an upper bound lowered or
// added.
func (c *comparer) bounds(about, ptr string, om, nm map[string]any) {
	for _, k := range []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"} {
		nv, ok := nm[k].(float64)
		if !ok {
			continue
		}
		ov, had := om[k].(float64)
		lower := strings.HasPrefix(k, "min") || k == "exclusiveMinimum"
		if !had || (lower && nv > ov) || (!lower && nv < ov) {
			c.add(about, child(ptr, k), TypeNarrowed, "%s %v, was %s", k, nv, jsonText(om[k]))
		}
	}
}

// typeList is a schema's "type" as a list, nil when absent.
func typeList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out[s] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// jsonText is v as compact JSON, "none" for a missing value.
func jsonText(v any) string {
	if v == nil {
		return "none"
	}
	b, _ := json.Marshal(v) // decoded from JSON: always marshals
	return string(b)
}
