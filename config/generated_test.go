package config

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/iparams/schematest"
)

// update rewrites the generated files instead of comparing: go test ./config -update
var update = flag.Bool("update", false, "rewrite values.schema.json and the READMEs' parameter tables")

const (
	readmePath  = "../README.md" // the project's
	schemaPath  = "values.schema.json"
	beginMarker = "<!-- iparams:begin -->"
	endMarker   = "<!-- iparams:end -->"
)

// The parameter tables of both READMEs are the one Docs renders. Each must have
// the block: a README without one fails rather than skipping the check.
func TestReadmeDocsUpToDate(t *testing.T) {
	for _, tt := range []struct{ name, path string }{{"project README", readmePath}, {"config README", "README.md"}} {
		t.Run(tt.name, func(t *testing.T) { checkReadme(t, tt.path) })
	}
}

func checkReadme(t *testing.T, path string) {
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
		"and paste its output between the lines %s and %s (or run `go test ./config -update`)", path, beginMarker, endMarker)
}

// replaceBlock puts docs (ending in a newline) between the marker lines of text:
// a marker counts only as a whole line (surrounding blanks aside), so that one
// quoted in prose or a table cell is not taken for the block's edge, and each
// must appear exactly once, begin before end. same reports whether the block
// already held docs (blank lines around it aside).
func replaceBlock(text, docs string) (updated string, same bool, err error) {
	lines := strings.SplitAfter(text, "\n")
	begin, err := markerLine(lines, beginMarker)
	if err != nil {
		return "", false, err
	}
	end, err := markerLine(lines, endMarker)
	switch {
	case err != nil:
		return "", false, err
	case end < begin:
		return "", false, fmt.Errorf("%s comes before %s", endMarker, beginMarker)
	}
	block := strings.Join(lines[begin+1:end], "")
	updated = strings.Join(lines[:begin+1], "") + docs + strings.Join(lines[end:], "")
	return updated, strings.TrimSpace(block) == strings.TrimSpace(docs), nil
}

// markerLine is the index of the one line of lines that is marker.
func markerLine(lines []string, marker string) (int, error) {
	found := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != marker {
			continue
		}
		if found >= 0 {
			return 0, fmt.Errorf("%s appears on lines %d and %d: want it once", marker, found+1, i+1)
		}
		found = i
	}
	if found < 0 {
		return 0, fmt.Errorf("no line %s: add the block (see config/README.md)", marker)
	}
	return found, nil
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
		{"markers reversed", endMarker + "\n" + beginMarker + "\n", "", false, true},
		{"markers on one line", beginMarker + endMarker + "\n", "", false, true},
		{"marker in a table cell only", "| a | keep `" + beginMarker + "` |\n" + docs + endMarker + "\n", "", false, true},
		{"marker quoted in prose too", "see `" + beginMarker + "`\n" + beginMarker + "\nold\n" + endMarker + "\n",
			"see `" + beginMarker + "`\n" + beginMarker + "\n" + docs + endMarker + "\n", false, false},
		{"begin twice", beginMarker + "\n" + beginMarker + "\n" + endMarker + "\n", "", false, true},
		{"end missing", beginMarker + "\n" + docs, "", false, true},
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
