package iparams

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/iparams/schematest"
)

func TestLint(t *testing.T) {
	tests := []struct {
		name  string
		json  string
		wants []string // "key: attr" of each warning
	}{
		{"key in the key", `{"api_key": {"display_name": "API", "type": "text"}}`, []string{"api_key: secure"}},
		{"token in the display name", `{"t": {"display_name": "Access Token", "type": "text"}}`, []string{"t: secure"}},
		{"password", `{"db_password": {"display_name": "DB", "type": "text"}}`, []string{"db_password: secure"}},
		{"auth", `{"authorization": {"display_name": "H", "type": "text"}}`, []string{"authorization: secure"}},
		{"secret", `{"s": {"display_name": "Client secret", "type": "text"}}`, []string{"s: secure"}},
		{"marked secure", `{"api_key": {"display_name": "API key", "type": "text", "secure": true}}`, nil},
		{"harmless", `{"account": {"display_name": "Account", "type": "text"}}`, nil},
		{"required hidden without default", `{"a": {"display_name": "A", "type": "text", "required": true, "visible": false}}`, []string{"a: visible"}},
		{"required hidden with default", `{"a": {"display_name": "A", "type": "text", "required": true, "visible": false, "default_value": "x"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range Lint(d) {
				got = append(got, problemAt(w))
			}
			if !slices.Equal(got, tt.wants) {
				t.Errorf("warnings %q, want %q", got, tt.wants)
			}
		})
	}
}

func TestCheckScript(t *testing.T) {
	d, err := Parse([]byte(`{
		"a": {"display_name": "A", "type": "text", "events": [{"change": "onA"}]},
		"b": {"display_name": "B", "type": "text", "events": [{"change": "onB"}]},
		"c": {"display_name": "C", "type": "text", "events": [{"change": "onC"}]},
		"d": {"display_name": "D", "type": "text", "events": [{"change": "onD"}]},
		"e": {"display_name": "E", "type": "text", "events": [{"change": "onE"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	script := `function onA(v) { return ""; }
const onB = (v) => "";
let onC = async function (v) {};
// function onD(v) is mentioned, not defined: onDx is another function
function onDx(v) {}
var onE = v => v ? "" : "no";`
	var got []string
	for _, p := range CheckScript(d, []byte(script)) {
		got = append(got, p.Key)
	}
	// The line comment mentions onD as "function onD(": a source check cannot tell;
	// it accepts it, which is the safe side for a lint.
	if want := []string(nil); !slices.Equal(got, want) {
		t.Errorf("undefined callbacks for %v, want %v", got, want)
	}
	if ps := CheckScript(d, []byte("function onA() {}")); len(ps) != 4 {
		t.Errorf("an almost empty script: %d problems, want 4: %v", len(ps), ps)
	}
}

const sampleDecl = `{
	"api_url": {"display_name": "API URL", "description": "Base URL | e.g. https://x.example", "type": "url", "required": true},
	"api_key": {"display_name": "API key", "type": "api_key", "secure": true, "required": true, "type_attributes": {"product": "p"}},
	"level": {"display_name": "Level", "type": "dropdown", "options": ["debug", "info"], "default_value": "info"},
	"n": {"display_name": "N", "type": "number", "default_value": "3", "type_attributes": {"min": 1, "max": 5}},
	"on": {"display_name": "On", "type": "checkbox", "default_value": false},
	"res": {"display_name": "Res", "type": "multiselect", "options": ["a", "b"], "default_value": ["a", "b"],
		"regex": {"low": "^[a-z]+$", "low-error": "lower", "short": "^.{1,3}$", "short-error": "short"}},
	"acct": {"display_name": "Account", "type": "domain", "visible": false, "type_attributes": {"product": "p", "domain": "example.com"}},
	"tok": {"display_name": "Token", "type": "text", "regex": {"t": "^[A-Za-z0-9_-]+$", "t-error": "token"}},
	"when": {"display_name": "When", "type": "date"},
	"mail": {"display_name": "Mail", "type": "email"},
	"tel": {"display_name": "Tel", "type": "phone_number"},
	"notes": {"display_name": "Notes", "type": "paragraph"},
	"pick": {"display_name": "Pick", "type": "radio", "options": ["x", "y"]}
}`

func TestDocs(t *testing.T) {
	d, err := Parse([]byte(sampleDecl))
	if err != nil {
		t.Fatal(err)
	}
	d.EnvPrefix = "APP_"
	doc := Docs(d)
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	if len(lines) != 2+len(d.Keys()) {
		t.Fatalf("%d lines, want a header, a separator and a row per parameter:\n%s", len(lines), doc)
	}
	wantRows := map[int]string{
		0: "| Key | Environment variable | Type | Default | Required | Secure | Description |",
		2: "| `api_url` | `APP_API_URL` | url |  | yes |  | **API URL**: Base URL \\| e.g. https://x.example |",
		3: "| `api_key` | `APP_API_KEY` | api_key |  | yes | yes | **API key** |",
		4: "| `level` | `APP_LEVEL` | dropdown: debug, info | `info` |  |  | **Level** |",
		5: "| `n` | `APP_N` | number, 1 to 5 | `3` |  |  | **N** |",
		6: "| `on` | `APP_ON` | checkbox | `false` |  |  | **On** |",
		7: "| `res` | `APP_RES` | multiselect: a, b | `a,b` |  |  | **Res** |",
		8: "| `acct` | `APP_ACCT` | domain (https://&lt;account&gt;.example.com) |  |  |  | **Account** (hidden on the setup page) |",
	}
	for i, want := range wantRows {
		if lines[i] != want {
			t.Errorf("line %d\n got %s\nwant %s", i, lines[i], want)
		}
	}
	d.EnvPrefix = ""
	if strings.Contains(Docs(d), "Environment variable") {
		t.Error("the environment column is shown without a prefix")
	}
}

func TestJSONSchema(t *testing.T) {
	d, err := Parse([]byte(sampleDecl))
	if err != nil {
		t.Fatal(err)
	}
	out := JSONSchema(d)
	var doc struct {
		Schema     string                    `json:"$schema"`
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Schema != SchemaDraft {
		t.Errorf("$schema %q", doc.Schema)
	}
	if !slices.Equal(doc.Required, []string{"api_url"}) {
		t.Errorf("required %v, want only api_url (api_key is secure)", doc.Required)
	}
	key := doc.Properties["api_key"]
	if key["writeOnly"] != true || key["default"] != nil {
		t.Errorf("api_key schema %v: want writeOnly and no default", key)
	}
	if n := doc.Properties["n"]; n["type"] != "integer" || n["minimum"] != 1.0 || n["maximum"] != 5.0 || n["default"] != 3.0 {
		t.Errorf("n schema %v", n)
	}
	if l := doc.Properties["level"]; !reflect.DeepEqual(l["enum"], []any{"debug", "info"}) || l["default"] != "info" {
		t.Errorf("level schema %v", l)
	}
	// The keys keep the declaration order.
	if i, j := bytes.Index(out, []byte(`"api_url": {`)), bytes.Index(out, []byte(`"pick": {`)); i < 0 || j < i {
		t.Error("properties are not in declaration order")
	}

	schema := schematest.Compile(t, out)
	valid := []string{
		`{"api_url": "https://x.example"}`,
		`{"api_url": "https://x.example", "api_key": "k", "level": "debug", "n": 5, "on": true, "res": ["a"],
		  "acct": "acme", "tok": "a_b", "when": "2024-01-31", "mail": "a@b.example", "tel": "+1 555 0100 22", "notes": "x\ny", "pick": "y"}`,
	}
	invalid := []string{
		`{}`,
		`{"api_url": "https://x.example", "other": 1}`,
		`{"api_url": "x.example"}`,
		`{"api_url": "https://x.example", "level": "trace"}`,
		`{"api_url": "https://x.example", "n": 6}`,
		`{"api_url": "https://x.example", "n": "3"}`,
		`{"api_url": "https://x.example", "on": "true"}`,
		`{"api_url": "https://x.example", "res": ["c"]}`,
		`{"api_url": "https://x.example", "res": ["a", "a"]}`,
		`{"api_url": "https://x.example", "tok": "a.b"}`,
		`{"api_url": "https://x.example", "acct": "a.b"}`,
		`{"api_url": "https://x.example", "api_key": "a b"}`,
		`{"api_url": "https://x.example", "pick": "z"}`,
	}
	schematest.Check(t, schema, true, valid...)
	schematest.Check(t, schema, false, invalid...)
}

func TestValuesFileRoundTrip(t *testing.T) {
	d, err := Parse([]byte(sampleDecl))
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"api_url": "https://x.example", "api_key": "k-1", "level": "info", "n": "4",
		"on": "true", "res": "b", "when": "2024-01-31", "notes": "two\nlines"}
	v, err := d.Validate(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"api_url\": \"https://x.example\",\n  \"api_key\": \"k-1\",\n  \"n\": 4,\n  \"on\": true,\n  \"res\": [\"b\"],\n  \"when\": \"2024-01-31\",\n  \"notes\": \"two\\nlines\"\n}\n"
	if got := string(v.EncodeFile()); got != want {
		t.Errorf("EncodeFile (level equals its default and is left out)\n got %s\nwant %s", got, want)
	}
	path := filepath.Join(t.TempDir(), "values.json")
	if err := v.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	raw, err := DecodeValues(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.Validate(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.All(), v.All()) || !bytes.Equal(again.EncodeFile(), v.EncodeFile()) {
		t.Errorf("values changed through the file:\n%v\n%v", again.All(), v.All())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d files left in the directory, want only the values file", len(entries))
	}
	if _, err := DecodeValues([]byte(`{"a": 1, "a": 2}`)); err == nil {
		t.Error("a key given twice was accepted")
	}
	if _, err := DecodeValues([]byte(`[]`)); err == nil {
		t.Error("an array was accepted as a values file")
	}
}
