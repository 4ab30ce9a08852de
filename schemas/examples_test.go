package schemas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamples: the sample event of every type (README, schemas/README.md), as a
// run against the simulator published it, validates.
func TestExamples(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("examples/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(body); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		seen[strings.TrimSuffix(filepath.Base(f), ".json")] = true
	}
	for _, typ := range v.Types() {
		if !seen[typ] {
			t.Errorf("no example of %s in schemas/examples", typ)
		}
	}
}
