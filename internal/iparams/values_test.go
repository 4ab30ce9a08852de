package iparams

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// one declares a single parameter "v" from the attributes of attrs (a JSON object
// body without braces).
func one(t *testing.T, attrs string) *Declarations {
	t.Helper()
	d, err := Parse([]byte(`{"v": {"display_name": "V", ` + attrs + `}}`))
	if err != nil {
		t.Fatalf("declare %s: %v", attrs, err)
	}
	return d
}

func TestValueRules(t *testing.T) {
	const (
		options = `"options": ["a", "b", "c"]`
		absent  = "\x00absent" // the key is not given at all
	)
	tests := []struct {
		name  string
		attrs string
		in    any
		want  any    // the value Get returns
		err   string // a substring of the one problem, "" for none
	}{
		{"text", `"type": "text"`, "hello", "hello", ""},
		{"text trimmed", `"type": "text"`, "  hello \n", "hello", ""},
		{"text two lines", `"type": "text"`, "a\nb", nil, "single line"},
		{"text from a JSON number", `"type": "text"`, json.Number("5"), nil, "must be a string"},
		{"paragraph keeps lines", `"type": "paragraph"`, "a\nb\n", "a\nb\n", ""},
		{"dropdown option", `"type": "dropdown", ` + options, "b", "b", ""},
		{"dropdown other", `"type": "dropdown", ` + options, "z", nil, `"z" is not one of: a, b, c`},
		{"radio option", `"type": "radio", ` + options, "c", "c", ""},
		{"radio other", `"type": "radio", ` + options, "A", nil, "not one of"},
		{"email", `"type": "email"`, "ops@example.com", "ops@example.com", ""},
		{"email with a name", `"type": "email"`, "Ops <ops@example.com>", nil, "email address"},
		{"email without a dot in the domain", `"type": "email"`, "ops@localhost", nil, "email address"},
		{"email without @", `"type": "email"`, "ops.example.com", nil, "email address"},
		{"number", `"type": "number"`, "42", int64(42), ""},
		{"number negative", `"type": "number"`, "-7", int64(-7), ""},
		{"number with plus", `"type": "number"`, "+7", int64(7), ""},
		{"number of 10 digits", `"type": "number"`, "9999999999", int64(9999999999), ""},
		{"number of 11 digits", `"type": "number"`, "10000000000", nil, "at most 10 digits"},
		{"number decimal", `"type": "number"`, "1.5", nil, "integer"},
		{"number word", `"type": "number"`, "ten", nil, "integer"},
		{"number JSON", `"type": "number"`, json.Number("12"), int64(12), ""},
		{"number JSON decimal", `"type": "number"`, json.Number("1.2"), nil, "integer"},
		{"number float64", `"type": "number"`, float64(3), int64(3), ""},
		{"number float64 fraction", `"type": "number"`, 3.5, nil, "integer"},
		{"number boolean", `"type": "number"`, true, nil, "integer"},
		{"number below min", `"type": "number", "type_attributes": {"min": 1, "max": 5}`, "0", nil, "at least 1"},
		{"number below min, range and value", `"type": "number", "type_attributes": {"min": 1, "max": 5}`, "0", nil, "must be at least 1 (allowed: 1 to 5), not 0"},
		{"number word, range and value", `"type": "number", "type_attributes": {"min": 1, "max": 5}`, "abc", nil, `must be an integer (allowed: 1 to 5), not "abc"`},
		{"number word, value", `"type": "number"`, "abc", nil, `must be an integer of at most 10 digits, not "abc"`},
		{"number above max", `"type": "number", "type_attributes": {"min": 1, "max": 5}`, "6", nil, "at most 5"},
		{"number at the bounds", `"type": "number", "type_attributes": {"min": 1, "max": 5}`, "5", int64(5), ""},
		{"phone", `"type": "phone_number"`, "+1 (415) 555-0100", "+1 (415) 555-0100", ""},
		{"phone too short", `"type": "phone_number"`, "555-01", nil, "phone number"},
		{"phone too long", `"type": "phone_number"`, "+1234567890123456", nil, "phone number"},
		{"phone with letters", `"type": "phone_number"`, "+1 415 CALL NOW", nil, "phone number"},
		{"date", `"type": "date"`, "2024-02-29", "2024-02-29", ""},
		{"date not real", `"type": "date"`, "2023-02-29", nil, "real date"},
		{"date other format", `"type": "date"`, "29/02/2024", nil, "YYYY-MM-DD"},
		{"url https", `"type": "url"`, "https://example.com/x", "https://example.com/x", ""},
		{"url nats", `"type": "url"`, "nats://127.0.0.1:4222", "nats://127.0.0.1:4222", ""},
		{"url without scheme", `"type": "url"`, "example.com", nil, "absolute URL"},
		{"url without host", `"type": "url"`, "https://", nil, "absolute URL"},
		{"url relative", `"type": "url"`, "/api/v1", nil, "absolute URL"},
		{"checkbox true", `"type": "checkbox"`, true, true, ""},
		{"checkbox env true", `"type": "checkbox"`, "TRUE", true, ""},
		{"checkbox env 0", `"type": "checkbox"`, "0", false, ""},
		{"checkbox env yes", `"type": "checkbox"`, "yes", nil, "true or false"},
		{"checkbox absent is unset", `"type": "checkbox"`, absent, nil, ""},
		{"checkbox required unchecked", `"type": "checkbox", "required": true`, false, nil, "must be checked"},
		{"multiselect array", `"type": "multiselect", ` + options, []any{"c", "a"}, []string{"a", "c"}, ""},
		{"multiselect env", `"type": "multiselect", ` + options, " c, a,,a ", []string{"a", "c"}, ""},
		{"multiselect other", `"type": "multiselect", ` + options, "a,z", nil, `"z" is not one of`},
		{"multiselect not strings", `"type": "multiselect", ` + options, []any{1.0}, nil, "list of strings"},
		{"multiselect only commas is empty", `"type": "multiselect", "required": true, ` + options, ",", nil, "required"},
		{"domain", `"type": "domain", "type_attributes": {"product": "p", "domain": "example.com"}`, "Acme", "acme", ""},
		{"domain pasted URL", `"type": "domain", "type_attributes": {"product": "p", "domain": "example.com"}`, "https://acme.example.com/", "acme", ""},
		{"domain with a dot", `"type": "domain", "type_attributes": {"product": "p", "domain": "example.com"}`, "acme.other.com", nil, "account name only"},
		{"domain with underscore", `"type": "domain", "type_attributes": {"product": "p", "domain": "example.com"}`, "ac_me", nil, "account name only"},
		{"api_key", `"type": "api_key", "type_attributes": {"product": "p"}`, "k3y-VALUE", "k3y-VALUE", ""},
		{"api_key with a space", `"type": "api_key", "type_attributes": {"product": "p"}`, "k3y VALUE", nil, "one word"},
		{"api_key with a tab", `"type": "api_key", "type_attributes": {"product": "p"}`, "k3y\tVALUE", nil, "one word"},
		{"required given", `"type": "text", "required": true`, "x", "x", ""},
		{"required absent", `"type": "text", "required": true`, absent, nil, "required"},
		{"required blank", `"type": "text", "required": true`, "   ", nil, "required"},
		{"required null", `"type": "text", "required": true`, nil, nil, "required"},
		{"required with a default", `"type": "text", "required": true, "default_value": "d"`, absent, "d", ""},
		{"default when absent", `"type": "text", "default_value": "d"`, absent, "d", ""},
		{"default when blank", `"type": "text", "default_value": "d"`, "", "d", ""},
		{"default not used when given", `"type": "text", "default_value": "d"`, "x", "x", ""},
		{"optional absent", `"type": "text"`, absent, nil, ""},
		{"regex passes", `"type": "text", "regex": {"t": "^[a-z]+$", "t-error": "lower-case letters only"}`, "abc", "abc", ""},
		{"regex message", `"type": "text", "regex": {"t": "^[a-z]+$", "t-error": "lower-case letters only"}`, "aBc", nil, "lower-case letters only"},
		{"regex on each choice", `"type": "multiselect", ` + options + `, "regex": {"t": "^[ab]$", "t-error": "a or b"}`, "a,c", nil, "a or b"},
		{"regex on a number", `"type": "number", "regex": {"even": "[02468]$", "even-error": "even numbers only"}`, "3", nil, "even numbers only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := one(t, tt.attrs)
			raw := map[string]any{"v": tt.in}
			if tt.in == absent {
				raw = map[string]any{}
			}
			v, err := d.Validate(raw)
			if tt.err != "" {
				var ps Problems
				if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Key != "v" || !strings.Contains(ps[0].Message, tt.err) {
					t.Fatalf("error %v, want one problem on v containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got, err := v.Get("v")
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	d, err := Parse([]byte(`{
		"a": {"display_name": "A", "type": "text", "required": true},
		"n": {"display_name": "N", "type": "number", "type_attributes": {"max": 3}, "regex": {"odd": "[13579]$", "odd-error": "odd only"}},
		"k": {"display_name": "K", "type": "api_key", "secure": true, "type_attributes": {"product": "p"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Validate(map[string]any{"n": "4", "k": "secret value", "zz": "1", "b": "2"})
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not Problems", err)
	}
	want := []string{"a: required", "n: must be at most 3, not 4", "n: odd only",
		"k: must be one word: no spaces or control characters",
		"b: " + ErrUnknownKey.Error(), "zz: " + ErrUnknownKey.Error()}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems\n got %q\nwant %q", got, want)
	}
	if strings.Contains(err.Error(), "secret value") {
		t.Errorf("the error shows a secure value: %v", err)
	}
}

func secureDecl(t *testing.T) *Declarations {
	t.Helper()
	d, err := Parse([]byte(`{
		"url": {"display_name": "URL", "type": "url"},
		"list": {"display_name": "L", "type": "multiselect", "options": ["x", "y"], "default_value": ["y"]},
		"key": {"display_name": "Key", "type": "api_key", "secure": true, "type_attributes": {"product": "p"}},
		"pw": {"display_name": "PW", "type": "text", "secure": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSecureValues(t *testing.T) {
	v, err := secureDecl(t).Validate(map[string]any{"url": "https://x.example", "key": "s3cr3t-key"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.All(), map[string]any{"url": "https://x.example", "list": []string{"y"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("All() = %v, want %v (secure keys left out)", got, want)
	}
	if _, err := v.Get("key"); !errors.Is(err, ErrSecure) {
		t.Errorf("Get(secure) error %v, want ErrSecure", err)
	}
	if _, err := v.Get("nope"); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "no installation parameter matches the key") {
		t.Errorf("Get(unknown) error %v, want ErrUnknownKey", err)
	}
	h := http.Header{}
	if err := v.SetHeader(h, "key", "X-Api-Auth"); err != nil || h.Get("X-Api-Auth") != "s3cr3t-key" {
		t.Errorf("SetHeader: %v, header %q", err, h.Get("X-Api-Auth"))
	}
	if err := v.SetHeader(h, "list", "X-List"); err != nil || h.Get("X-List") != "y" {
		t.Errorf("SetHeader(plain): %v, header %q", err, h.Get("X-List"))
	}
	if err := v.SetHeader(h, "nope", "X"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("SetHeader(unknown) error %v", err)
	}
	if err := v.SetHeader(h, "pw", "X-PW"); !errors.Is(err, ErrNotSet) {
		t.Errorf("SetHeader(unset) error %v, want ErrNotSet", err)
	}
	if s, err := v.Secret("key"); err != nil || s.Reveal() != "s3cr3t-key" {
		t.Errorf("Secret: %v", err)
	}
	if s, err := v.Secret("pw"); err != nil || !s.IsZero() {
		t.Errorf("Secret(unset) = %v, %v; want the zero value", s, err)
	}
	if _, err := v.Secret("url"); !errors.Is(err, ErrNotSecure) {
		t.Errorf("Secret(plain) error %v, want ErrNotSecure", err)
	}
	if !v.IsSet("key") || v.IsSet("pw") || !v.IsDefault("list") || v.IsDefault("url") {
		t.Error("IsSet/IsDefault disagree with the input")
	}
	masked, _ := json.Marshal(v.Masked())
	if strings.Contains(string(masked), "s3cr3t") || !strings.Contains(string(masked), `"key":"[REDACTED]"`) {
		t.Errorf("Masked() = %s", masked)
	}
	// Values handed out are copies.
	all := v.All()
	all["list"].([]string)[0] = "changed"
	if got, _ := v.Get("list"); got.([]string)[0] != "y" {
		t.Error("All() shares its slices with the values")
	}
}
