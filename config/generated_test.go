package config

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/callbus/callbus/internal/iparams/schematest"
	"github.com/callbus/callbus/internal/testkit/docblock"
)

// update rewrites the generated files instead of comparing: go test ./config -update
var update = flag.Bool("update", false, "rewrite values.schema.json and the parameter tables of docs/configuration.md and config/README.md")

const (
	configPage  = "../docs/configuration.md" // the project's reference of settings
	schemaPath  = "values.schema.json"
	beginMarker = "<!-- iparams:begin -->"
	endMarker   = "<!-- iparams:end -->"
)

// The parameter tables of the configuration page and config/README.md are the one Docs renders. Each must have
// the block: a README without one fails rather than skipping the check.
func TestReadmeDocsUpToDate(t *testing.T) {
	for _, tt := range []struct{ name, path string }{{"configuration page", configPage}, {"config README", "README.md"}} {
		t.Run(tt.name, func(t *testing.T) { checkReadme(t, tt.path) })
	}
}

func checkReadme(t *testing.T, path string) {
	docs, err := Docs()
	if err != nil {
		t.Fatal(err)
	}
	docblock.Check(t, path, docblock.Markers{Begin: beginMarker, End: endMarker}, docs, *update,
		"`go run ./cmd/poller config docs` and paste its output between the markers (or `go test ./config -update`)")
}

// The checked-in values.schema.json is the one JSONSchema renders, and it is a
// valid draft-07 schema that accepts a good values object and refuses bad ones.
func TestValuesSchemaUpToDate(t *testing.T) {
	want, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(schemaPath)
	if err != nil && !*update {
		t.Fatalf("%v: run `go run ./cmd/poller config schema > config/values.schema.json`", err)
	}
	if !bytes.Equal(got, want) {
		if *update {
			if err := os.WriteFile(schemaPath, want, 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("config/values.schema.json is stale: run `go run ./cmd/poller config schema > config/values.schema.json` " +
				"(or `go test ./config -update`)")
		}
	}

	schema := schematest.Compile(t, want)
	schematest.Check(t, schema, true, `{"api_url": "http://127.0.0.1:8080", "api_key": "k", "account": "acme", "stream_replicas": 3,
		"resources": ["calls", "teams"], "log_level": "debug", "nats_url": "nats://a:4222,nats://b:4222"}`)
	schematest.Check(t, schema, false,
		`{"api_key": "k"}`,
		`{"account": "acme", "stream_replicas": 6}`,
		`{"account": "acme", "stream_replicas": "3"}`,
		`{"account": "acme.eu"}`,
		`{"account": "acme", "resources": ["recordings"]}`,
		`{"account": "acme", "redis_url": "http://r:6379"}`,
		`{"account": "acme", "unknown": 1}`,
	)
}
