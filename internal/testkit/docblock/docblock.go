// Package docblock keeps generated blocks of documentation pages current: a page
// holds hand-written prose around a block between two marker lines, and a test
// compares the block with what a generator renders (or rewrites it with -update).
// It is test support: nothing but tests imports it.
package docblock

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Markers are the begin and end lines of one block, e.g. "<!-- iparams:begin -->".
type Markers struct{ Begin, End string }

// Check compares the block of the page at path with docs. With update it rewrites
// a stale block instead of failing; otherwise a stale block fails the test with
// fix, the command that regenerates it.
func Check(t testing.TB, path string, m Markers, docs string, update bool, fix string) {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	updated, same, err := m.Replace(string(page), docs)
	switch {
	case err != nil:
		t.Fatalf("%s: %v", path, err)
	case same:
		return
	case update:
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the block between %s and %s is stale: run %s", path, m.Begin, m.End, fix)
}

// Replace puts docs (ending in a newline) between the marker lines of text: a
// marker counts only as a whole line (surrounding blanks aside), so that one
// quoted in prose or a table cell is not taken for the block's edge, and each
// must appear exactly once, begin before end. same reports whether the block
// already held docs (blank lines around it aside).
func (m Markers) Replace(text, docs string) (updated string, same bool, err error) {
	lines := strings.SplitAfter(text, "\n")
	begin, err := markerLine(lines, m.Begin)
	if err != nil {
		return "", false, err
	}
	end, err := markerLine(lines, m.End)
	switch {
	case err != nil:
		return "", false, err
	case end < begin:
		return "", false, fmt.Errorf("%s comes before %s", m.End, m.Begin)
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
		return 0, fmt.Errorf("no line %s: add the block", marker)
	}
	return found, nil
}
