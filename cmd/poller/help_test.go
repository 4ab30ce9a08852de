package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command answers -h and --help with exit status 0 and its usage on stdout.
func TestHelp(t *testing.T) {
	commands := []string{"run", "demo", "config validate", "config docs", "config schema", "setup", "replay", "tail", "backfill", "status", "account forget", "state", "state rewind", "debug bundle", "completion", "version", "help"}
	tests := []struct {
		args []string
		want []string // in stdout
	}{
		{[]string{"help"}, commands},
		{[]string{"-h"}, commands},
		{[]string{"--help"}, commands},
		{[]string{"run", "--help"}, []string{"usage: poller [run]", "flags:", "-config FILE", "`poller help`"}},
		{[]string{"--config", "x.json", "-h"}, []string{"usage: poller [run]", "-config FILE"}},
		{[]string{"backfill", "--help"}, []string{"usage: poller backfill", "-config FILE", "-since"}},
		{[]string{"status", "--help"}, []string{"usage: poller status", "-addr"}},
		{[]string{"demo", "--help"}, []string{"usage: poller demo", "simulated time", "-speed", "-duration"}},
		{[]string{"demo", "-h"}, []string{"usage: poller demo"}},
		{[]string{"config", "--help"}, []string{"validate", "docs", "schema"}},
		{[]string{"config", "validate", "--help"}, []string{"required setting", "-config FILE"}},
		{[]string{"config", "docs", "-h"}, []string{"usage: poller config"}},
		{[]string{"config", "schema", "--help"}, []string{"usage: poller config"}},
		{[]string{"replay", "--help"}, []string{"usage: poller replay", "-entity ENTITY", "-since", "-pretty"}},
		{[]string{"replay", "--since", "1h", "-h"}, []string{"usage: poller replay"}},
		{[]string{"tail", "-h"}, []string{"usage: poller tail", "-entity ENTITY", "-type"}},
		{[]string{"account", "--help"}, []string{"usage: poller account forget"}},
		{[]string{"account", "forget", "-h"}, []string{"usage: poller account forget", "-account", "-force", "-config FILE"}},
		{[]string{"state", "rewind", "--help"}, []string{"usage: poller state", "-to T", "-ask-leader", "under the account's lease"}},
		{[]string{"debug", "bundle", "-h"}, []string{"usage: poller debug bundle", "-out FILE"}},
		{[]string{"completion", "--help"}, []string{"bash", "zsh", "fish"}},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), tt.args, env(nil), &out, &errOut); err != nil {
			t.Errorf("%v: %v, want exit status 0", tt.args, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: stdout lacks %q:\n%s", tt.args, w, out.String())
			}
		}
		if errOut.Len() > 0 {
			t.Errorf("%v: stderr %q", tt.args, errOut.String())
		}
		if len(tt.args) > 0 && tt.args[0] == "run" && strings.Contains(out.String(), "\ncommands:\n") {
			t.Errorf("%v: repeats the list of commands:\n%s", tt.args, out.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			// A flag's line is "  -name PLACEHOLDER": a back-quoted phrase in its usage
			// text that is not a placeholder garbles it into several words.
			// (A one-letter flag's usage follows a tab on the same line.)
			flagPart, _, _ := strings.Cut(line, "\t")
			if strings.HasPrefix(line, "  -") && len(strings.Fields(flagPart)) > 2 {
				t.Errorf("%v: garbled flag line %q", tt.args, line)
			}
		}
	}
	// setup's own parser answers help on stderr; the status is 0 all the same.
	var out bytes.Buffer
	if err := run(t.Context(), []string{"setup", "--help"}, env(nil), &out, &out); err != nil || !strings.Contains(out.String(), "-addr") {
		t.Errorf("setup --help: %v\n%s", err, out.String())
	}
}

// A bad flag or a missing subcommand is exit status 2, with the usage on stderr.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"demo", "--nope"}, {"config"}, {"config", "frob"}, {"config", "docs", "extra"}, {"run", "--nope"}, {"version2"}, {"account"}, {"account", "forget"}, {"account", "drop", "--account", "x"}} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), args, env(nil), &out, &errOut)
		var ec exitCode
		if !errors.As(err, &ec) || ec.code != 2 {
			t.Errorf("%v: want exit status 2, got %v", args, err)
		}
	}
}

// config validate checks what `poller run` needs, and names the variables.
func TestConfigValidateRequired(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"config", "validate"}, env(nil), &out, &errOut)
	var ec exitCode
	if !errors.As(err, &ec) || ec.code != 2 {
		t.Fatalf("nothing set: want exit status 2, got %v", err)
	}
	for _, w := range []string{"CALLBUS_API_KEY or CALLBUS_API_KEY_FILE", "CALLBUS_ACCOUNT", "CALLBUS_API_URL", "CALLBUS_API_DOMAIN"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	runErr := run(t.Context(), []string{"run"}, env(nil), &out, &errOut)
	if runErr == nil || runErr.Error() != err.Error() {
		t.Errorf("run and config validate disagree:\n%v\n%v", runErr, err)
	}
}

// Console logs carry colour codes only on a terminal.
func TestConsoleNoColourOffTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, w := range []interface{ Write([]byte) (int, error) }{&buf, f} {
		log := newLogger(w, "info", "console")
		log.Warn().Str("k", "v").Msg("hello")
	}
	_ = f.Close()
	b, _ := os.ReadFile(f.Name())
	for _, s := range []string{buf.String(), string(b)} {
		if !strings.Contains(s, "hello") || strings.Contains(s, "\x1b[") {
			t.Errorf("console log off a terminal: %q", s)
		}
	}
}

// -h is the usage lines and flags; --help the whole text; `poller -h` the
// commands, `poller --help` the global flags, environment and exit status too;
// --no-color is taken anywhere before "--", NO_COLOR too.
func TestShortAndFullHelp(t *testing.T) {
	help := func(vars map[string]string, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(t.Context(), args, env(vars), &out, &errOut); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	short, full := help(nil, "state", "-h"), help(nil, "state", "--help")
	if !strings.Contains(short, "--help for the full text") || strings.Contains(short, "Prints each account") || !strings.Contains(short, "-account NAME") {
		t.Errorf("state -h:\n%s", short)
	}
	if !strings.Contains(full, "Prints each account") || !strings.Contains(full, "-account NAME") {
		t.Errorf("state --help:\n%s", full)
	}
	top, topFull := help(nil, "-h"), help(nil, "--no-color", "--help")
	if strings.Contains(top, "exit status:") || !strings.Contains(top, "state rewind") {
		t.Errorf("poller -h:\n%s", top)
	}
	for _, want := range []string{"exit status:", "NO_COLOR", "--no-color", "2  usage"} {
		if !strings.Contains(topFull, want) {
			t.Errorf("poller --help lacks %q", want)
		}
	}
	if got := help(map[string]string{"NO_COLOR": "1"}, "version", "--no-color"); !strings.HasPrefix(got, "callbus poller") {
		t.Errorf("version with --no-color: %q", got)
	}
}
