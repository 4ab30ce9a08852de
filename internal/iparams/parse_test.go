package iparams

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// problemAt is the "key: attr" a problem is reported at.
func problemAt(p Problem) string { return p.Key + ": " + p.Attr }

func TestParseRules(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []string // "key: attr" of every expected problem, in order
	}{
		{"minimal text", `{"a": {"display_name": "A", "type": "text"}}`, nil},
		{"every attribute", `{"a": {"display_name": "A", "description": "d", "type": "dropdown",
			"options": ["x", "y"], "default_value": "y", "required": true, "visible": false, "secure": false,
			"regex": {"r": "^[xy]$", "r-error": "x or y"}, "type_attributes": {"product": "p"},
			"events": [{"change": "onA"}]}}`, nil},
		{"not an object", `[1]`, []string{": "}},
		{"invalid JSON", `{"a": `, []string{": "}},
		{"empty file", `{}`, []string{": "}},
		{"declaration not an object", `{"a": "text"}`, []string{"a: "}},
		{"display_name missing", `{"a": {"type": "text"}}`, []string{"a: display_name"}},
		{"display_name empty", `{"a": {"display_name": " ", "type": "text"}}`, []string{"a: display_name"}},
		{"display_name not a string", `{"a": {"display_name": 1, "type": "text"}}`, []string{"a: display_name"}},
		{"type missing", `{"a": {"display_name": "A"}}`, []string{"a: type"}},
		{"type unknown", `{"a": {"display_name": "A", "type": "password"}}`, []string{"a: type"}},
		{"unknown attribute", `{"a": {"display_name": "A", "type": "text", "placeholder": "x"}}`, []string{"a: placeholder"}},
		{"attribute twice", `{"a": {"display_name": "A", "type": "text", "type": "text"}}`, []string{"a: type"}},
		{"key twice", `{"a": {"display_name": "A", "type": "text"}, "a": {"display_name": "A", "type": "text"}}`, []string{"a: "}},
		{"key not an identifier", `{"api-key": {"display_name": "A", "type": "text"}}`, []string{"api-key: "}},
		{"keys differ in case only", `{"a": {"display_name": "A", "type": "text"}, "A": {"display_name": "A", "type": "text"}}`, []string{"A: "}},
		{"required not boolean", `{"a": {"display_name": "A", "type": "text", "required": "yes"}}`, []string{"a: required"}},
		{"visible not boolean", `{"a": {"display_name": "A", "type": "text", "visible": 1}}`, []string{"a: visible"}},
		{"description not a string", `{"a": {"display_name": "A", "type": "text", "description": ["x"]}}`, []string{"a: description"}},
		// options
		{"options missing for dropdown", `{"a": {"display_name": "A", "type": "dropdown"}}`, []string{"a: options"}},
		{"options missing for radio", `{"a": {"display_name": "A", "type": "radio"}}`, []string{"a: options"}},
		{"options missing for multiselect", `{"a": {"display_name": "A", "type": "multiselect"}}`, []string{"a: options"}},
		{"options on text", `{"a": {"display_name": "A", "type": "text", "options": ["x"]}}`, []string{"a: options"}},
		{"options on checkbox", `{"a": {"display_name": "A", "type": "checkbox", "options": ["x"]}}`, []string{"a: options"}},
		{"options empty", `{"a": {"display_name": "A", "type": "radio", "options": []}}`, []string{"a: options"}},
		{"options not strings", `{"a": {"display_name": "A", "type": "radio", "options": [1, 2]}}`, []string{"a: options"}},
		{"option duplicated", `{"a": {"display_name": "A", "type": "radio", "options": ["x", "x"]}}`, []string{"a: options[1]"}},
		{"option blank", `{"a": {"display_name": "A", "type": "radio", "options": ["x", ""]}}`, []string{"a: options[1]"}},
		{"multiselect option with comma", `{"a": {"display_name": "A", "type": "multiselect", "options": ["x,y"]}}`, []string{"a: options[0]"}},
		{"dropdown option with comma is fine", `{"a": {"display_name": "A", "type": "dropdown", "options": ["x,y"]}}`, nil},
		// default_value
		{"default from options", `{"a": {"display_name": "A", "type": "radio", "options": ["x", "y"], "default_value": "y"}}`, nil},
		{"default not in options", `{"a": {"display_name": "A", "type": "dropdown", "options": ["x"], "default_value": "z"}}`, []string{"a: default_value"}},
		{"multiselect default array", `{"a": {"display_name": "A", "type": "multiselect", "options": ["x", "y"], "default_value": ["y"]}}`, nil},
		{"multiselect default string", `{"a": {"display_name": "A", "type": "multiselect", "options": ["x"], "default_value": "x"}}`, []string{"a: default_value"}},
		{"multiselect default not in options", `{"a": {"display_name": "A", "type": "multiselect", "options": ["x"], "default_value": ["x", "z"]}}`, []string{"a: default_value"}},
		{"multiselect default empty", `{"a": {"display_name": "A", "type": "multiselect", "options": ["x"], "default_value": []}}`, []string{"a: default_value"}},
		{"checkbox default boolean", `{"a": {"display_name": "A", "type": "checkbox", "default_value": true}}`, nil},
		{"checkbox default string", `{"a": {"display_name": "A", "type": "checkbox", "default_value": "true"}}`, []string{"a: default_value"}},
		{"text default number", `{"a": {"display_name": "A", "type": "text", "default_value": 5}}`, []string{"a: default_value"}},
		{"text default empty", `{"a": {"display_name": "A", "type": "text", "default_value": ""}}`, []string{"a: default_value"}},
		{"number default", `{"a": {"display_name": "A", "type": "number", "default_value": "15"}}`, nil},
		{"number default not a number", `{"a": {"display_name": "A", "type": "number", "default_value": "ten"}}`, []string{"a: default_value"}},
		{"number default out of bounds", `{"a": {"display_name": "A", "type": "number", "default_value": "0", "type_attributes": {"min": 1}}}`, []string{"a: default_value"}},
		{"url default invalid", `{"a": {"display_name": "A", "type": "url", "default_value": "example.com"}}`, []string{"a: default_value"}},
		{"default fails regex", `{"a": {"display_name": "A", "type": "text", "default_value": "a.b", "regex": {"t": "^[a-z]+$", "t-error": "letters"}}}`, []string{"a: default_value"}},
		{"secure with default", `{"a": {"display_name": "A", "type": "text", "secure": true, "default_value": "x"}}`, []string{"a: default_value"}},
		// secure
		{"secure text", `{"a": {"display_name": "A", "type": "text", "secure": true}}`, nil},
		{"secure checkbox", `{"a": {"display_name": "A", "type": "checkbox", "secure": true}}`, []string{"a: secure"}},
		{"secure dropdown", `{"a": {"display_name": "A", "type": "dropdown", "options": ["x"], "secure": true}}`, []string{"a: secure"}},
		// type_attributes
		{"api_key without product", `{"a": {"display_name": "A", "type": "api_key"}}`, []string{"a: type_attributes.product"}},
		{"api_key with product", `{"a": {"display_name": "A", "type": "api_key", "type_attributes": {"product": "p"}}}`, nil},
		{"domain without product", `{"a": {"display_name": "A", "type": "domain", "type_attributes": {"domain": "x.com"}}}`, []string{"a: type_attributes.product"}},
		{"domain without domain", `{"a": {"display_name": "A", "type": "domain", "type_attributes": {"product": "p"}}}`, []string{"a: type_attributes.domain"}},
		{"domain not a host", `{"a": {"display_name": "A", "type": "domain", "type_attributes": {"product": "p", "domain": "https://x.com"}}}`, []string{"a: type_attributes.domain"}},
		{"domain on text", `{"a": {"display_name": "A", "type": "text", "type_attributes": {"domain": "x.com"}}}`, []string{"a: type_attributes.domain"}},
		{"type_attributes unknown", `{"a": {"display_name": "A", "type": "text", "type_attributes": {"size": 3}}}`, []string{"a: type_attributes.size"}},
		{"type_attributes not an object", `{"a": {"display_name": "A", "type": "text", "type_attributes": "p"}}`, []string{"a: type_attributes"}},
		{"product empty", `{"a": {"display_name": "A", "type": "api_key", "type_attributes": {"product": ""}}}`, []string{"a: type_attributes.product", "a: type_attributes.product"}},
		{"min max on number", `{"a": {"display_name": "A", "type": "number", "type_attributes": {"min": -5, "max": 5}}}`, nil},
		{"min above max", `{"a": {"display_name": "A", "type": "number", "type_attributes": {"min": 6, "max": 5}}}`, []string{"a: type_attributes"}},
		{"min not an integer", `{"a": {"display_name": "A", "type": "number", "type_attributes": {"min": 1.5}}}`, []string{"a: type_attributes.min"}},
		{"max of 11 digits", `{"a": {"display_name": "A", "type": "number", "type_attributes": {"max": 12345678901}}}`, []string{"a: type_attributes.max"}},
		{"min on text", `{"a": {"display_name": "A", "type": "text", "type_attributes": {"min": 1}}}`, []string{"a: type_attributes"}},
		{"scope process", `{"a": {"display_name": "A", "type": "text", "type_attributes": {"scope": "process"}}}`, nil},
		{"scope account", `{"a": {"display_name": "A", "type": "number", "type_attributes": {"min": 1, "scope": "account"}}}`, nil},
		{"scope unknown", `{"a": {"display_name": "A", "type": "text", "type_attributes": {"scope": "fleet"}}}`, []string{"a: type_attributes.scope"}},
		// regex
		{"regex pair", `{"a": {"display_name": "A", "type": "text", "regex": {"r": "^x", "r-error": "x first"}}}`, nil},
		{"regex without message", `{"a": {"display_name": "A", "type": "text", "regex": {"r": "^x"}}}`, []string{"a: regex.r-error"}},
		{"regex message without rule", `{"a": {"display_name": "A", "type": "text", "regex": {"r-error": "m"}}}`, []string{"a: regex.r-error"}},
		{"regex invalid", `{"a": {"display_name": "A", "type": "text", "regex": {"r": "(", "r-error": "m"}}}`, []string{"a: regex.r"}},
		{"regex message empty", `{"a": {"display_name": "A", "type": "text", "regex": {"r": "x", "r-error": ""}}}`, []string{"a: regex.r-error"}},
		{"regex not a string", `{"a": {"display_name": "A", "type": "text", "regex": {"r": 1, "r-error": "m"}}}`, []string{"a: regex.r"}},
		{"regex not an object", `{"a": {"display_name": "A", "type": "text", "regex": "^x"}}`, []string{"a: regex"}},
		{"regex nameless message", `{"a": {"display_name": "A", "type": "text", "regex": {"-error": "m"}}}`, []string{"a: regex.-error"}},
		// events
		{"change event", `{"a": {"display_name": "A", "type": "text", "events": [{"change": "$on_A1"}]}}`, nil},
		{"other event", `{"a": {"display_name": "A", "type": "text", "events": [{"blur": "onA"}]}}`, []string{"a: events[0]"}},
		{"two pairs in an entry", `{"a": {"display_name": "A", "type": "text", "events": [{"change": "f", "blur": "g"}]}}`, []string{"a: events[0]"}},
		{"callback not an identifier", `{"a": {"display_name": "A", "type": "text", "events": [{"change": "on-a"}]}}`, []string{"a: events[0].change"}},
		{"callback reserved word", `{"a": {"display_name": "A", "type": "text", "events": [{"change": "function"}]}}`, []string{"a: events[0].change"}},
		{"callback not a string", `{"a": {"display_name": "A", "type": "text", "events": [{"change": true}]}}`, []string{"a: events[0].change"}},
		{"change twice", `{"a": {"display_name": "A", "type": "text", "events": [{"change": "f"}, {"change": "g"}]}}`, []string{"a: events[1]"}},
		{"events not an array", `{"a": {"display_name": "A", "type": "text", "events": {"change": "f"}}}`, []string{"a: events"}},
		// every problem at once, across keys
		{"all at once", `{"a": {"type": "radio"}, "b": {"display_name": "B", "type": "api_key", "regex": {"r": "x"}}}`,
			[]string{"a: display_name", "a: options", "b: regex.r-error", "b: type_attributes.product"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.json))
			var got []string
			var ps Problems
			if errors.As(err, &ps) {
				for _, p := range ps {
					got = append(got, problemAt(p))
				}
			} else if err != nil {
				t.Fatalf("error %v is not Problems", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("problems at %q, want %q\n%v", got, tt.want, err)
			}
			if err == nil && d == nil {
				t.Fatal("no declarations and no error")
			}
			if err != nil && d != nil {
				t.Fatal("declarations returned with an error")
			}
		})
	}
}

func TestParseKeepsFileOrder(t *testing.T) {
	d, err := Parse([]byte(`{"zeta": {"display_name": "Z", "type": "text"}, "alpha": {"display_name": "A", "type": "text"},
		"mid": {"display_name": "M", "type": "text", "regex": {"b": "b", "b-error": "B", "a": "a", "a-error": "A"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Keys(), []string{"zeta", "alpha", "mid"}; !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	p, _ := d.Param("mid")
	if len(p.Regex) != 2 || p.Regex[0].Name != "b" || p.Regex[1].Name != "a" {
		t.Errorf("regex rules %+v, want b then a", p.Regex)
	}
}

func TestParsedParam(t *testing.T) {
	d, err := Parse([]byte(`{"n": {"display_name": "N", "type": "number", "default_value": "+42",
		"type_attributes": {"min": 1, "max": 100}, "events": [{"change": "onN"}]},
		"m": {"display_name": "M", "type": "multiselect", "options": ["x", "y", "z"], "default_value": ["z", "x"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := d.Param("n")
	if n.Default != int64(42) || *n.Min != 1 || *n.Max != 100 || n.Change != "onN" || !n.Visible {
		t.Errorf("parsed %+v", n)
	}
	m, _ := d.Param("m")
	if got, _ := m.Default.([]string); !slices.Equal(got, []string{"z", "x"}) {
		t.Errorf("multiselect default %v", m.Default)
	}
	if _, ok := d.Param("nope"); ok {
		t.Error("found an undeclared key")
	}
}

func TestProblemsError(t *testing.T) {
	ps := Problems{{Key: "a", Attr: "type", Message: "required"}, {Key: "b", Message: "must be a string"}}
	if got, want := ps.Error(), "2 problems: a: type: required; b: must be a string"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := (Problems{{Message: "x"}}).Error(); !strings.HasPrefix(got, "1 problem: ") {
		t.Errorf("Error() = %q", got)
	}
	if (Problems{}).Err() != nil {
		t.Error("empty Problems is an error")
	}
	if got := ps.ByKey()["a"]; !slices.Equal(got, []string{"type: required"}) {
		t.Errorf("ByKey = %v", got)
	}
}

func TestProblemsMerge(t *testing.T) {
	ps := Problems{{Key: "a", Message: "1"}}
	got := ps.Merge(Problems{{Key: "a", Message: "2"}, {Key: "b", Message: "3"}, {Key: "b", Message: "4"}})
	var msgs []string
	for _, p := range got {
		msgs = append(msgs, p.Message)
	}
	if want := []string{"1", "3", "4"}; !slices.Equal(msgs, want) {
		t.Errorf("Merge kept %v, want %v", msgs, want)
	}
}
