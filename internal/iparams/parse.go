package iparams

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// keyRE is what a key may be: an identifier, so that it names an environment
// variable once upper-cased (a callbus rule; the specification leaves keys open).
var keyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads an iparams.json document: an object mapping each key to its
// declaration. It checks every rule of the specification (see the package doc for
// callbus's extensions) and returns all broken rules at once as Problems. Keys keep
// their file order.
func Parse(data []byte) (*Declarations, error) {
	var ps Problems
	c := collector{&ps}
	top, err := members(data)
	if err != nil {
		c.add("", "", "iparams.json: %v", err)
		return nil, ps
	}
	d := &Declarations{index: make(map[string]int)}
	envs := make(map[string]string) // upper-cased key → first key, to catch clashes
	for _, m := range top {
		if !keyRE.MatchString(m.Key) {
			c.add(m.Key, "", "a key must start with a letter or '_' and hold only letters, digits and '_' (it names an environment variable)")
		}
		if _, dup := d.index[m.Key]; dup {
			c.add(m.Key, "", "declared more than once")
			continue
		}
		if first, clash := envs[strings.ToUpper(m.Key)]; clash {
			c.add(m.Key, "", "differs from %q only in case: both would read the same environment variable", first)
		}
		envs[strings.ToUpper(m.Key)] = m.Key
		p, ok := parseParam(m.Key, m.Value, c)
		if !ok {
			continue
		}
		d.index[m.Key] = len(d.params)
		d.params = append(d.params, p)
	}
	if len(top) == 0 {
		c.add("", "", "iparams.json declares no parameter")
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return d, nil
}

// parseParam decodes and checks one declaration, reporting into c. ok is false
// when the declaration is not an object at all.
func parseParam(key string, raw json.RawMessage, c collector) (Param, bool) {
	attrs, err := members(raw)
	if err != nil {
		c.add(key, "", "a declaration must be a JSON object, not %s", jsonKind(raw))
		return Param{}, false
	}
	p := Param{Key: key, Visible: true}
	seen := make(map[string]json.RawMessage)
	for _, a := range attrs {
		if _, dup := seen[a.Key]; dup {
			c.add(key, a.Key, "given more than once")
			continue
		}
		seen[a.Key] = a.Value
		switch a.Key {
		case "display_name":
			p.DisplayName = needString(key, a, c, true)
		case "description":
			p.Description = needString(key, a, c, false)
		case "type":
			p.Type = Type(needString(key, a, c, true))
		case "options":
			p.Options = parseOptions(key, a.Value, c)
		case "required":
			p.Required = needBool(key, a, c)
		case "visible":
			p.Visible = needBool(key, a, c)
		case "secure":
			p.Secure = needBool(key, a, c)
		case "regex":
			p.Regex = parseRegex(key, a.Value, c)
		case "type_attributes":
			parseTypeAttributes(&p, a.Value, c)
		case "events":
			p.Change = parseEvents(key, a.Value, c)
		case "default_value":
			// checked below, once type and options are known
		default:
			c.add(key, a.Key, "unknown attribute (known: display_name, description, type, options, default_value, required, visible, secure, regex, type_attributes, events)")
		}
	}
	if _, ok := seen["display_name"]; !ok {
		c.add(key, "display_name", "required")
	}
	if _, ok := seen["type"]; !ok {
		c.add(key, "type", "required")
		return p, true
	}
	if !p.Type.Known() {
		if p.Type != "" {
			c.add(key, "type", "%q is not a type (one of %s)", p.Type, typeList())
		}
		return p, true
	}
	checkTypeRules(&p, seen, c)
	if raw, ok := seen["default_value"]; ok {
		p.Default = parseDefault(p, raw, c)
	}
	return p, true
}

// checkTypeRules checks the attributes whose rules depend on the type.
func checkTypeRules(p *Param, seen map[string]json.RawMessage, c collector) {
	_, hasOptions := seen["options"]
	switch {
	case p.Type.HasOptions() && !hasOptions:
		c.add(p.Key, "options", "required for type %s", p.Type)
	case !p.Type.HasOptions() && hasOptions:
		c.add(p.Key, "options", "only radio, dropdown and multiselect take options, not %s", p.Type)
	}
	if p.Type == Multiselect {
		for i, o := range p.Options {
			if strings.Contains(o, ",") {
				c.add(p.Key, fmt.Sprintf("options[%d]", i), "%q contains a comma, which separates the choices in an environment variable", o)
			}
		}
	}
	if p.Type.NeedsProduct() && p.Product == "" {
		c.add(p.Key, "type_attributes.product", "required for type %s", p.Type)
	}
	if p.Type == Domain && p.DomainSuffix == "" {
		c.add(p.Key, "type_attributes.domain", "required for type domain: the domain part after the account name, e.g. mycallcenter.com")
	}
	if p.Type != Domain && p.DomainSuffix != "" {
		c.add(p.Key, "type_attributes.domain", "only for type domain")
	}
	if p.Type != Number && (p.Min != nil || p.Max != nil) {
		c.add(p.Key, "type_attributes", "min and max are only for type number")
	}
	if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
		c.add(p.Key, "type_attributes", "min %d is above max %d", *p.Min, *p.Max)
	}
	if p.Secure && !p.Type.CanBeSecure() {
		c.add(p.Key, "secure", "only free-text types can be secure (text, paragraph, email, phone_number, url, api_key), not %s", p.Type)
	}
	if p.Secure && hasKey(seen, "default_value") {
		c.add(p.Key, "default_value", "a secure parameter cannot have a default: it would be published with the declaration")
	}
}

func hasKey(m map[string]json.RawMessage, k string) bool { _, ok := m[k]; return ok }

func typeList() string {
	names := make([]string, 0, len(Types()))
	for _, t := range Types() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// needString decodes a string attribute; nonEmpty also refuses "".
func needString(key string, a member, c collector, nonEmpty bool) string {
	var s string
	if err := json.Unmarshal(a.Value, &s); err != nil {
		c.add(key, a.Key, "must be a string, not %s", jsonKind(a.Value))
		return ""
	}
	if nonEmpty && strings.TrimSpace(s) == "" {
		c.add(key, a.Key, "must not be empty")
	}
	return s
}

// needBool decodes a boolean attribute.
func needBool(key string, a member, c collector) bool {
	var b bool
	if err := json.Unmarshal(a.Value, &b); err != nil {
		c.add(key, a.Key, "must be true or false, not %s", jsonKind(a.Value))
	}
	return b
}

// parseOptions decodes options: a non-empty array of distinct non-empty strings.
func parseOptions(key string, raw json.RawMessage, c collector) []string {
	var opts []string
	if err := json.Unmarshal(raw, &opts); err != nil {
		c.add(key, "options", "must be an array of strings")
		return nil
	}
	if len(opts) == 0 {
		c.add(key, "options", "must list at least one option")
	}
	seen := make(map[string]bool)
	for i, o := range opts {
		switch {
		case strings.TrimSpace(o) == "":
			c.add(key, fmt.Sprintf("options[%d]", i), "must not be empty")
		case seen[o]:
			c.add(key, fmt.Sprintf("options[%d]", i), "%q is listed twice", o)
		}
		seen[o] = true
	}
	return opts
}
