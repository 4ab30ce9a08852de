package iparams

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// parseRegex decodes the regex object: pairs <name> → pattern and <name>-error →
// message. Every pattern must compile (Go RE2 syntax, which the page also runs as a
// JavaScript RegExp) and every name needs its -error pair and vice versa.
func parseRegex(key string, raw json.RawMessage, c collector) []Rule {
	ms, err := members(raw)
	if err != nil {
		c.add(key, "regex", "must be an object of <name>: pattern and <name>-error: message pairs, not %s", jsonKind(raw))
		return nil
	}
	texts := make(map[string]string, len(ms))
	present := make(map[string]bool, len(ms))
	for _, m := range ms {
		attr := "regex." + m.Key
		present[m.Key] = true
		var s string
		if err := json.Unmarshal(m.Value, &s); err != nil {
			c.add(key, attr, "must be a string, not %s", jsonKind(m.Value))
			continue
		}
		if _, dup := texts[m.Key]; dup {
			c.add(key, attr, "given more than once")
			continue
		}
		texts[m.Key] = s
	}
	var rules []Rule
	for _, m := range ms {
		attr := "regex." + m.Key
		if base, isMsg := strings.CutSuffix(m.Key, "-error"); isMsg {
			if !present[base] && base != "" {
				c.add(key, attr, "has no rule %q to describe", base)
			}
			if base == "" {
				c.add(key, attr, "a rule needs a name before -error")
			}
			continue
		}
		pattern, ok := texts[m.Key]
		if !ok {
			continue // reported above
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			c.add(key, attr, "not a valid regular expression: %v", err)
		}
		msg, hasMsg := texts[m.Key+"-error"]
		switch {
		case !hasMsg:
			c.add(key, attr+"-error", "missing: rule %q needs the message shown when it fails", m.Key)
		case strings.TrimSpace(msg) == "":
			c.add(key, attr+"-error", "must not be empty")
		}
		if strings.TrimSpace(msg) == "" {
			// Reported above; the rule still checks default_value, whose problem
			// needs a message all the same.
			msg = fmt.Sprintf("does not match regex %q", m.Key)
		}
		if re != nil {
			rules = append(rules, Rule{Name: m.Key, Pattern: re, Message: msg})
		}
	}
	return rules
}

// hostRE is a domain name: dot-separated DNS labels.
var hostRE = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$`)

// parseTypeAttributes decodes type_attributes into p: product, and callbus's
// domain, min, max and scope.
func parseTypeAttributes(p *Param, raw json.RawMessage, c collector) {
	ms, err := members(raw)
	if err != nil {
		c.add(p.Key, "type_attributes", "must be an object, not %s", jsonKind(raw))
		return
	}
	for _, m := range ms {
		attr := "type_attributes." + m.Key
		switch m.Key {
		case "product":
			p.Product = needString(p.Key, member{attr, m.Value}, c, true)
		case "domain":
			p.DomainSuffix = needString(p.Key, member{attr, m.Value}, c, true)
			if p.DomainSuffix != "" && !hostRE.MatchString(p.DomainSuffix) {
				c.add(p.Key, attr, "%q is not a domain name such as mycallcenter.com", p.DomainSuffix)
			}
		case "min", "max":
			n, ok := parseBound(m.Value)
			if !ok {
				c.add(p.Key, attr, "must be an integer of at most 10 digits, not %s", string(m.Value))
				continue
			}
			if m.Key == "min" {
				p.Min = &n
			} else {
				p.Max = &n
			}
		case "scope":
			p.Scope = needString(p.Key, member{attr, m.Value}, c, true)
			if p.Scope != ScopeAccount && p.Scope != ScopeProcess {
				c.add(p.Key, attr, "must be %q or %q, not %q", ScopeAccount, ScopeProcess, p.Scope)
			}
		default:
			c.add(p.Key, attr, "unknown attribute (known: product; callbus adds domain, min, max, scope)")
		}
	}
}

// parseBound decodes a JSON integer of at most 10 digits.
func parseBound(raw json.RawMessage) (int64, bool) {
	var num json.Number
	if err := json.Unmarshal(raw, &num); err != nil {
		return 0, false
	}
	n, err := parseInteger(num.String())
	return n, err == nil
}

// jsIdentRE is a JavaScript identifier in the ASCII range, which is what a callback
// name must be for the page to find the function.
var jsIdentRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// jsReserved are words a function cannot be named.
var jsReserved = map[string]bool{
	"break": true, "case": true, "catch": true, "class": true, "const": true, "continue": true,
	"debugger": true, "default": true, "delete": true, "do": true, "else": true, "enum": true,
	"export": true, "extends": true, "false": true, "finally": true, "for": true, "function": true,
	"if": true, "import": true, "in": true, "instanceof": true, "new": true, "null": true,
	"return": true, "super": true, "switch": true, "this": true, "throw": true, "true": true,
	"try": true, "typeof": true, "var": true, "void": true, "while": true, "with": true,
	"yield": true, "let": true, "static": true, "await": true, "implements": true,
	"interface": true, "package": true, "private": true, "protected": true, "public": true,
}

// parseEvents decodes events: an array of one-pair objects, change → callback name.
// It returns the change callback.
func parseEvents(key string, raw json.RawMessage, c collector) string {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		c.add(key, "events", "must be an array of {\"change\": \"callbackName\"} objects, not %s", jsonKind(raw))
		return ""
	}
	var change string
	for i, e := range entries {
		attr := fmt.Sprintf("events[%d]", i)
		ms, err := members(e)
		if err != nil || len(ms) != 1 {
			c.add(key, attr, "must be an object with exactly one pair, such as {\"change\": \"onChange\"}")
			continue
		}
		m := ms[0]
		if m.Key != "change" {
			c.add(key, attr, "event %q is not supported: only change is", m.Key)
			continue
		}
		var name string
		if err := json.Unmarshal(m.Value, &name); err != nil {
			c.add(key, attr+".change", "must be the callback's name as a string, not %s", jsonKind(m.Value))
			continue
		}
		switch {
		case !jsIdentRE.MatchString(name) || jsReserved[name]:
			c.add(key, attr+".change", "%q is not a JavaScript function name", name)
		case change != "":
			c.add(key, attr, "change is declared more than once")
		default:
			change = name
		}
	}
	return change
}
