// Package skipreport skips tests that need a program this machine lacks
// (redis-server, chromium, …) in a way nobody misses: `go test` shows skips only
// with -v, so each skip is also appended to the file CALLBUS_SKIP_REPORT names,
// which `make test` prints at its end; and under CALLBUS_REQUIRE_INTEGRATION=1 (CI)
// the test fails instead, since CI must never silently skip one.
package skipreport

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// Required reports whether optional tests must not skip
// (CALLBUS_REQUIRE_INTEGRATION=1).
func Required() bool { return os.Getenv("CALLBUS_REQUIRE_INTEGRATION") == "1" }

// Skip skips t for reason (what is missing and how to install it), after adding
// "<test>: <reason>" to the CALLBUS_SKIP_REPORT file when that is set; under
// CALLBUS_REQUIRE_INTEGRATION=1 it fails t instead. It does not return.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s, and CALLBUS_REQUIRE_INTEGRATION=1", reason)
	}
	if err := record(os.Getenv("CALLBUS_SKIP_REPORT"), t.Name(), reason); err != nil {
		t.Errorf("report the skip: %v", err)
	}
	t.Skip(reason)
}

// record appends one line to the report at path ("" for none). Each write is
// one append of a short line, so parallel test binaries do not interleave.
func record(path, name, reason string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s: %s\n", name, reason)
	return errors.Join(err, f.Close())
}
