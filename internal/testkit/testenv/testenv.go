// Package testenv is for tests that need a program this machine may lack
// (chromium, prometheus): they find it, or skip with a reason that `make test`
// lists at its end, or fail under CALLBUS_REQUIRE_INTEGRATION=1 (CI), where
// nothing may skip.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// SkipOptional skips a test that needs a program this machine lacks, unless
// CALLBUS_REQUIRE_INTEGRATION=1 (as in CI), where the test fails: CI must never
// skip it. go test shows skips only with -v, so the reason is also appended to
// the file CALLBUS_SKIP_REPORT names, which `make test` prints at its end.
func SkipOptional(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CALLBUS_REQUIRE_INTEGRATION") == "1" {
		t.Fatalf("%s, and CALLBUS_REQUIRE_INTEGRATION=1", reason)
	}
	if path := os.Getenv("CALLBUS_SKIP_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "%s: %s\n", t.Name(), reason)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Errorf("report the skip: %v", err)
		}
	}
	t.Skip(reason)
}

// Program returns the path of the first of names on the PATH; without any it
// skips (see SkipOptional) with reason.
func Program(t testing.TB, reason string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	SkipOptional(t, reason)
	return ""
}
