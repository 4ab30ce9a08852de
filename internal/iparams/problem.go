package iparams

import (
	"fmt"
	"slices"
	"strings"
)

// Problem is one broken rule: of a declaration (Attr names the attribute, e.g.
// "type_attributes.product" or "regex.token") or of a value (Attr is empty).
// Messages never contain the value of a secure parameter.
type Problem struct {
	Key     string // the parameter key; empty for the file as a whole
	Attr    string // the declaration attribute, if any
	Message string
}

// String renders "key: attr: message", leaving out the empty parts.
func (p Problem) String() string {
	parts := make([]string, 0, 3)
	if p.Key != "" {
		parts = append(parts, p.Key)
	}
	if p.Attr != "" {
		parts = append(parts, p.Attr)
	}
	return strings.Join(append(parts, p.Message), ": ")
}

// Problems is every broken rule found in one pass, in declaration order. It is the
// error returned by Parse, Validate and the config loader; use errors.As to list
// them.
type Problems []Problem

// Error joins the problems on one line, so that a log line carries all of them.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	noun := "problems"
	if len(ps) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("%d %s: %s", len(ps), noun, strings.Join(lines, "; "))
}

// ByKey groups the messages by parameter key (attributes prefixed), for a form.
func (ps Problems) ByKey() map[string][]string {
	m := make(map[string][]string)
	for _, p := range ps {
		msg := p.Message
		if p.Attr != "" {
			msg = p.Attr + ": " + msg
		}
		m[p.Key] = append(m[p.Key], msg)
	}
	return m
}

// Err returns ps as an error, or nil when there is no problem.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// collector accumulates problems for one key.
type collector struct{ ps *Problems }

func (c collector) add(key, attr, format string, args ...any) {
	*c.ps = append(*c.ps, Problem{Key: key, Attr: attr, Message: fmt.Sprintf(format, args...)})
}

// Merge appends the problems of more whose key has none in ps yet: a rule between
// parameters says nothing new about a key that is already wrong.
func (ps Problems) Merge(more Problems) Problems {
	had := len(ps)
	for _, p := range more {
		if !slices.ContainsFunc(ps[:had], func(q Problem) bool { return q.Key == p.Key }) {
			ps = append(ps, p)
		}
	}
	return ps
}
