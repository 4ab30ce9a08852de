package skipreport

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skipped.txt")
	for _, r := range []string{"no chromium", "no redis-server"} {
		if err := record(path, "TestX", r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "TestX: no chromium\nTestX: no redis-server\n"; string(b) != want {
		t.Errorf("report %q, want %q", b, want)
	}
	if err := record("", "TestX", "r"); err != nil {
		t.Errorf("no report file: %v", err)
	}
}

// Skip writes the report and skips; run in a subtest so that the skip ends only it.
func TestSkip(t *testing.T) {
	if Required() {
		t.Skip("under CALLBUS_REQUIRE_INTEGRATION=1 Skip fails the test by design")
	}
	path := filepath.Join(t.TempDir(), "skipped.txt")
	t.Setenv("CALLBUS_SKIP_REPORT", path)
	t.Run("missing", func(t *testing.T) { Skip(t, "no frobnicator (apt-get install frob)") })
	b, _ := os.ReadFile(path)
	if want := "TestSkip/missing: no frobnicator (apt-get install frob)\n"; string(b) != want {
		t.Errorf("report %q, want %q", b, want)
	}
}
