// Package schematest checks generated JSON Schemas in tests (iparams.JSONSchema,
// config's values.schema.json, the Helm chart's): it compiles one as a real
// validator would and runs sample values through it.
package schematest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles data, a schema in the draft its $schema names, with format
// assertions on (so that "uri", "email" and "date" are checked, as the setup page
// and Validate check them). It fails t when data is not a valid schema.
func Compile(t testing.TB, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("values.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("values.schema.json")
	if err != nil {
		t.Fatalf("not a valid schema: %v", err)
	}
	return s
}

// Check validates each JSON document of values against s and reports an error on
// t for each whose validity is not want. A document that is not JSON fails t.
func Check(t testing.TB, s *jsonschema.Schema, want bool, values ...string) {
	t.Helper()
	for _, v := range values {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(v))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if err := s.Validate(doc); (err == nil) != want {
			t.Errorf("%s: validation error %v, want valid %v", v, err, want)
		}
	}
}
