package contract

import (
	"slices"
	"strings"
)

// onlyNewTypes reports whether entry, a new allOf entry of the current file nf, is a
// conditional (if/then) whose if holds only for event types the released envelope
// does not list: the rules of a type being added (its subject pattern, say), which
// no event a consumer already handles can meet.
func (c *comparer) onlyNewTypes(nf string, entry any) bool {
	_, n, err := c.cur.deref(nf, entry)
	if err != nil {
		return false
	}
	m, _ := n.(map[string]any)
	cond, _ := m["if"].(map[string]any)
	props, _ := cond["properties"].(map[string]any)
	typ, _ := props["type"].(map[string]any)
	if typ == nil || !hasString(cond["required"], "type") {
		return false
	}
	var values []any
	if v, ok := typ["const"]; ok {
		values = []any{v}
	} else if e, ok := typ["enum"].([]any); ok {
		values = e
	}
	released := c.releasedTypes()
	if len(values) == 0 || released == nil {
		return false
	}
	for _, v := range values {
		s, ok := v.(string)
		if !ok || released[s] {
			return false
		}
	}
	return true
}

func hasString(v any, s string) bool { return stringSet(v)[s] }

// releasedTypes is the released envelope's type enum as a set, nil when it has
// none.
func (c *comparer) releasedTypes() map[string]bool {
	env, _ := c.old["envelope.json"].(map[string]any)
	props, _ := env["properties"].(map[string]any)
	typ, _ := props["type"].(map[string]any)
	if _, ok := typ["enum"].([]any); !ok {
		return nil
	}
	return stringSet(typ["enum"])
}

// widened reports whether the current pattern n accepts at least what the released
// o did, in the one form the contract's patterns take for that: both "^(A|B|…)$",
// with every alternative of o among n's (a subject kind added beside the others).
func widened(o, n any) bool {
	os, ok1 := o.(string)
	ns, ok2 := n.(string)
	if !ok1 || !ok2 {
		return false
	}
	oa, ok1 := alternatives(os)
	na, ok2 := alternatives(ns)
	if !ok1 || !ok2 {
		return false
	}
	for _, a := range oa {
		if !slices.Contains(na, a) {
			return false
		}
	}
	return true
}

// alternatives splits "^(A|B|C)$" into A, B and C at the group's own bars (not
// those nested in parentheses or brackets, nor escaped); false for any other form.
func alternatives(p string) ([]string, bool) {
	if !strings.HasPrefix(p, "^(") || !strings.HasSuffix(p, ")$") {
		return nil, false
	}
	body := p[2 : len(p)-2]
	var out []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(body); i++ {
		switch ch := body[i]; {
		case ch == '\\':
			i++
		case class:
			class = ch != ']'
		case ch == '[':
			class = true
		case ch == '(':
			depth++
		case ch == ')':
			if depth == 0 {
				return nil, false // the group closes before the end: not one group
			}
			depth--
		case ch == '|' && depth == 0:
			out = append(out, body[start:i])
			start = i + 1
		}
	}
	if depth != 0 || class {
		return nil, false
	}
	return append(out, body[start:]), true
}
