package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// update rewrites the generated files instead of comparing: go test ./config -update
var update = flag.Bool("update", false, "rewrite values.schema.json and the README's parameter table")

const (
	readmePath  = "../README.md" // the project's
	schemaPath  = "values.schema.json"
	beginMarker = "<!-- iparams:begin -->"
	endMarker   = "<!-- iparams:end -->"
)

// The parameter tables of the READMEs are the one Docs renders. The project's
// README may lack the block (the test then skips); config/README.md must have it.
func TestReadmeDocsUpToDate(t *testing.T) {
	for _, tt := range []struct {
		name, path  string
		needMarkers bool
	}{{"project README", readmePath, false}, {"config README", "README.md", true}} {
		t.Run(tt.name, func(t *testing.T) { checkReadme(t, tt.path, tt.needMarkers) })
	}
}

func checkReadme(t *testing.T, path string, needMarkers bool) {
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Docs()
	if err != nil {
		t.Fatal(err)
	}
	updated, same, err := replaceBlock(string(readme), docs)
	switch {
	case err == errNoMarkers && !needMarkers:
		t.Skipf("%s has no %s … %s block to keep in step", path, beginMarker, endMarker)
	case err != nil:
		t.Fatalf("%s: %v", path, err)
	case same:
		return
	case *update:
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the parameter table differs from config/iparams.json: run `go run ./cmd/poller config docs` "+
		"and paste its output between %s and %s (or run `go test ./config -update`)", path, beginMarker, endMarker)
}

var errNoMarkers = errors.New("no markers")

// replaceBlock puts docs between the markers of text. same reports whether the
// block already held it (blank lines around it aside).
func replaceBlock(text, docs string) (updated string, same bool, err error) {
	begin, end := strings.Index(text, beginMarker), strings.Index(text, endMarker)
	switch {
	case begin < 0 || end < 0:
		return "", false, errNoMarkers
	case end < begin:
		return "", false, fmt.Errorf("%s comes before %s", endMarker, beginMarker)
	}
	block := text[begin+len(beginMarker) : end]
	updated = text[:begin+len(beginMarker)] + "\n" + docs + text[end:]
	return updated, strings.TrimSpace(block) == strings.TrimSpace(docs), nil
}

func TestReplaceBlock(t *testing.T) {
	docs := "| a |\n|---|\n"
	tests := []struct {
		name, text, want string
		same             bool
		err              bool
	}{
		{"in step", "x\n" + beginMarker + "\n| a |\n|---|\n\n" + endMarker + "\ny", "x\n" + beginMarker + "\n" + docs + endMarker + "\ny", true, false},
		{"stale", "x\n" + beginMarker + "\nold\n" + endMarker + "\ny", "x\n" + beginMarker + "\n" + docs + endMarker + "\ny", false, false},
		{"no markers", "x", "", false, true},
		{"markers reversed", endMarker + beginMarker, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, same, err := replaceBlock(tt.text, docs)
			if (err != nil) != tt.err || got != tt.want || same != tt.same {
				t.Errorf("got %q, %v, %v; want %q, %v, error %v", got, same, err, tt.want, tt.same, tt.err)
			}
		})
	}
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

	schema := compileSchema(t, want)
	good := `{"api_url": "http://127.0.0.1:8080", "api_key": "k", "account": "acme", "stream_replicas": 3,
		"resources": ["calls", "teams"], "log_level": "debug", "nats_url": "nats://a:4222,nats://b:4222"}`
	bad := []string{
		`{"api_key": "k"}`,
		`{"account": "acme", "stream_replicas": 6}`,
		`{"account": "acme", "stream_replicas": "3"}`,
		`{"account": "acme.eu"}`,
		`{"account": "acme", "resources": ["recordings"]}`,
		`{"account": "acme", "redis_url": "http://r:6379"}`,
		`{"account": "acme", "unknown": 1}`,
	}
	for _, v := range append([]string{good}, bad...) {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(v))
		if err != nil {
			t.Fatal(err)
		}
		err = schema.Validate(inst)
		if (err == nil) != (v == good) {
			t.Errorf("%s: validation error %v", v, err)
		}
	}
}
