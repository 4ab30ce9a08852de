package iparams

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

var (
	integerRE = regexp.MustCompile(`^[+-]?[0-9]{1,10}$`)
	phoneRE   = regexp.MustCompile(`^\+?[0-9 ().-]+$`)
	labelRE   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	schemeRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)
)

// parseInteger parses an integer of at most 10 digits with an optional sign.
func parseInteger(s string) (int64, error) {
	if !integerRE.MatchString(s) {
		return 0, fmt.Errorf("must be an integer of at most 10 digits")
	}
	return strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
}

// value turns an input (a string from the environment or a form, or a decoded JSON
// value) into the typed value of p, and checks every rule. It returns the value or
// the messages of the broken rules. Messages quote the input only for the option
// types, whose values are public.
func (p Param) value(in any) (any, []string) {
	v, msg := p.convert(in)
	if msg != "" {
		return nil, []string{msg}
	}
	if msgs := p.check(v); len(msgs) > 0 {
		return nil, msgs
	}
	return v, nil
}

// convert applies the type's own rules.
func (p Param) convert(in any) (any, string) {
	switch p.Type {
	case Checkbox:
		return toBool(in)
	case Multiselect:
		return toList(in)
	case Number:
		v, msg := toNumber(in)
		if msg != "" {
			if p.allowed() != "" { // the range says more than the digits
				msg = "must be an integer"
			}
			// A number is never secure (only free text can be), so the input is quoted.
			msg = fmt.Sprintf("%s%s, not %s", msg, p.allowed(), quoteInput(in))
		}
		return v, msg
	}
	s, ok := in.(string)
	if !ok {
		return nil, "must be a string"
	}
	if p.Type != Paragraph {
		s = strings.TrimSpace(s)
	}
	switch p.Type {
	case Text:
		if strings.ContainsAny(s, "\r\n") {
			return nil, "must be a single line"
		}
	case Email:
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || !strings.Contains(s[strings.LastIndex(s, "@")+1:], ".") {
			return nil, "must be an email address such as ops@example.com"
		}
	case PhoneNumber:
		digits := countDigits(s)
		if !phoneRE.MatchString(s) || digits < 7 || digits > 15 {
			return nil, "must be a phone number: 7 to 15 digits, optionally after a +, grouped with spaces, dashes, dots or parentheses"
		}
	case Date:
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, "must be a real date written YYYY-MM-DD"
		}
	case URL:
		u, err := url.Parse(s)
		if err != nil || !schemeRE.MatchString(u.Scheme) || u.Host == "" {
			return nil, "must be an absolute URL with a scheme and a host, such as https://example.com"
		}
	case Domain:
		s = p.accountName(s)
		if !labelRE.MatchString(s) {
			return nil, fmt.Sprintf("must be the account name only (letters, digits and '-'), as in https://<account>.%s", p.DomainSuffix)
		}
	case APIKey:
		if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			return nil, "must be one word: no spaces or control characters"
		}
	}
	return s, ""
}

// accountName reduces a pasted URL or host name to its account name, lower-cased:
// "https://Acme.mycallcenter.com/" becomes "acme".
func (p Param) accountName(s string) string {
	s = strings.ToLower(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	s = strings.TrimSuffix(s, "/")
	return strings.TrimSuffix(s, "."+strings.ToLower(p.DomainSuffix))
}

func countDigits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

// check applies the options, the bounds and the regex rules to a converted value.
func (p Param) check(v any) []string {
	var msgs []string
	var texts []string // what the regex rules see
	switch v := v.(type) {
	case string:
		if p.Type.HasOptions() && !slices.Contains(p.Options, v) {
			msgs = append(msgs, fmt.Sprintf("%q is not one of: %s", v, strings.Join(p.Options, ", ")))
		}
		texts = []string{v}
	case []string:
		for _, item := range v {
			if !slices.Contains(p.Options, item) {
				msgs = append(msgs, fmt.Sprintf("%q is not one of: %s", item, strings.Join(p.Options, ", ")))
			}
		}
		texts = v
	case int64:
		if p.Min != nil && v < *p.Min {
			msgs = append(msgs, fmt.Sprintf("must be at least %d%s, not %d", *p.Min, p.allowed(), v))
		}
		if p.Max != nil && v > *p.Max {
			msgs = append(msgs, fmt.Sprintf("must be at most %d%s, not %d", *p.Max, p.allowed(), v))
		}
		texts = []string{strconv.FormatInt(v, 10)}
	case bool:
		texts = []string{strconv.FormatBool(v)}
	}
	for _, r := range p.Regex {
		for _, t := range texts {
			if !r.Pattern.MatchString(t) {
				msgs = append(msgs, r.Message)
				break
			}
		}
	}
	return msgs
}

// toBool accepts a boolean, or the strings true/false/1/0 in any case.
func toBool(in any) (any, string) {
	switch v := in.(type) {
	case bool:
		return v, ""
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1":
			return true, ""
		case "false", "0":
			return false, ""
		}
	}
	return nil, "must be true or false (or 1 or 0)"
}

// toList accepts an array of strings, or one string of comma-separated choices.
// Blank items are dropped and duplicates removed.
func toList(in any) (any, string) {
	var items []string
	switch v := in.(type) {
	case string:
		items = strings.Split(v, ",")
	case []string:
		items = v
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, "must be a list of strings"
			}
			items = append(items, s)
		}
	default:
		return nil, "must be a list of choices (a comma-separated string in the environment)"
	}
	out := make([]string, 0, len(items))
	for _, s := range items {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, ""
}

// toNumber accepts an integer of at most 10 digits as a string or a JSON number.
func toNumber(in any) (any, string) {
	const msg = "must be an integer of at most 10 digits"
	var s string
	switch v := in.(type) {
	case string:
		s = strings.TrimSpace(v)
	case json.Number:
		s = v.String()
	case float64:
		if v != math.Trunc(v) || math.Abs(v) >= 1e10 {
			return nil, msg
		}
		return int64(v), ""
	case int:
		s = strconv.Itoa(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	default:
		return nil, msg
	}
	n, err := parseInteger(s)
	if err != nil {
		return nil, msg
	}
	return n, ""
}

// parseDefault checks default_value: a boolean for checkbox, an array of options
// for multiselect, a string otherwise, valid for the parameter.
func parseDefault(p Param, raw json.RawMessage, c collector) any {
	const attr = "default_value"
	var in any
	switch p.Type {
	case Checkbox:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			c.add(p.Key, attr, "must be true or false for a checkbox, not %s", jsonKind(raw))
			return nil
		}
		in = b
	case Multiselect:
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			c.add(p.Key, attr, "must be an array of options for a multiselect, not %s", jsonKind(raw))
			return nil
		}
		if len(list) == 0 {
			c.add(p.Key, attr, "must select at least one option (leave default_value out otherwise)")
			return nil
		}
		in = list
	default:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			c.add(p.Key, attr, "must be a string for type %s, not %s", p.Type, jsonKind(raw))
			return nil
		}
		if strings.TrimSpace(s) == "" {
			c.add(p.Key, attr, "must not be empty (leave default_value out instead)")
			return nil
		}
		in = s
	}
	if p.Type.HasOptions() && len(p.Options) == 0 {
		return nil // the missing options are reported already
	}
	v, msgs := p.value(in)
	for _, m := range msgs {
		c.add(p.Key, attr, "%s", m)
	}
	return v
}

// allowed gives a number's range for a message, " (allowed: 1 to 3600)", when both
// bounds are declared (with one, the message's own bound says it all).
func (p Param) allowed() string {
	if p.Min == nil || p.Max == nil {
		return ""
	}
	return fmt.Sprintf(" (allowed: %d to %d)", *p.Min, *p.Max)
}

// quoteInput shows a refused input as it was given: a string quoted, anything else
// as JSON would write it.
func quoteInput(in any) string {
	if s, ok := in.(string); ok {
		return strconv.Quote(s)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Sprintf("%v", in)
	}
	return string(b)
}
