package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/testkit/skipreport"
)

// updateMan rewrites docs/poller.1 instead of comparing (make generate).
var updateMan = flag.Bool("update", false, "rewrite docs/poller.1")

// The bash completion script loads in bash and completes commands,
// subcommands, flags and the completion command's shells.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		skipreport.Skip(t, "bash not found: the completion script was not loaded")
	}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"completion", "bash"}, env(nil), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "poller.bash")
	if err := os.WriteFile(script, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			itoa(len(words)-1) + "\n_poller\nprintf '%s\\n' \"${COMPREPLY[@]}\"\ncomplete -p poller >/dev/null || exit 3\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, b)
		}
		return strings.Fields(string(b))
	}
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"poller", "sta"}, "status state"},
		{[]string{"poller", "state", ""}, "rewind --account --config --json"},
		{[]string{"poller", "state", "rewind", "--a"}, "--account --ask-leader"},
		{[]string{"poller", "debug", ""}, "bundle"},
		{[]string{"poller", "debug", "bundle", "--o"}, "--out"},
		{[]string{"poller", "completion", ""}, "bash zsh fish"},
		{[]string{"poller", "config", "v"}, "validate"},
		{[]string{"poller", "account", "forget", "--f"}, "--force"},
	} {
		if got := strings.Join(complete(tt.words...), " "); got != tt.want {
			t.Errorf("%q: completions %q, want %q", tt.words, got, tt.want)
		}
	}
	for _, shell := range []string{"zsh", "fish"} {
		out.Reset()
		if err := run(t.Context(), []string{"completion", shell}, env(nil), &out, &errOut); err != nil || !strings.Contains(out.String(), "rewind") {
			t.Errorf("completion %s: %v\n%s", shell, err, out.String())
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// docs/poller.1 is the man page made of the current help text; -update (make
// generate) rewrites it. Every command of the table has its section.
func TestManPageCurrent(t *testing.T) {
	const path = "../../docs/poller.1"
	got := manPage()
	for _, c := range commands() {
		if !strings.Contains(got, ".SS poller "+strings.Join(c.words, " ")+"\n") {
			t.Errorf("the man page has no section for %v", c.words)
		}
	}
	if *updateMan {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || string(want) != got {
		t.Errorf("docs/poller.1 is stale (%v): run make generate (or go test ./cmd/poller -run TestManPageCurrent -update)", err)
	}
}
