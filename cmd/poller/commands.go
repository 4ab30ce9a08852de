package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
)

// command is one entry of the command table: the words that name it ("state",
// "state rewind") and its one-line summary.
type command struct {
	words   []string
	summary string
}

// commands is the command table, read from the "commands:" section of usage
// (an entry a line at two spaces' indent, its summary after two or more spaces,
// continuation lines deeper): the one list that `poller help`, the completion
// scripts and the man page all follow, so a command added there is covered by
// each of them.
func commands() []command {
	_, section, _ := strings.Cut(usage, "\ncommands:\n")
	var out []command
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			if len(out) > 0 && strings.HasPrefix(line, "   ") {
				out[len(out)-1].summary += " " + strings.TrimSpace(line)
			}
			continue
		}
		name, summary, _ := strings.Cut(strings.TrimSpace(line), "  ")
		out = append(out, command{words: strings.Fields(name), summary: strings.TrimSpace(summary)})
	}
	return out
}

// topCommands are the first words of the table, in order, each once.
func topCommands() []string {
	var out []string
	for _, c := range commands() {
		if !slices.Contains(out, c.words[0]) {
			out = append(out, c.words[0])
		}
	}
	return out
}

// subcommands are the second words under top, in order.
func subcommands(top string) []string {
	var out []string
	for _, c := range commands() {
		if c.words[0] == top && len(c.words) > 1 {
			out = append(out, c.words[1])
		}
	}
	return out
}

// helpText is a command's --help output ("" for help and version, which have
// none of their own).
func helpText(c command) string {
	if c.words[0] == "help" || c.words[0] == "version" {
		return ""
	}
	var out, errOut bytes.Buffer
	args := append(slices.Clone(c.words), "--help")
	if err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut); err != nil {
		return ""
	}
	if out.Len() == 0 { // setup prints its usage where its own flag set does
		return errOut.String()
	}
	return out.String()
}

// flagLine matches a flag in the flag package's usage output: "  -name …".
var flagLine = regexp.MustCompile(`(?m)^  -([A-Za-z][-A-Za-z0-9]*)`)

// flagsOf are the flags a command's --help lists, as "--name".
func flagsOf(c command) []string {
	var out []string
	for _, m := range flagLine.FindAllStringSubmatch(helpText(c), -1) {
		if f := "--" + m[1]; !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}
