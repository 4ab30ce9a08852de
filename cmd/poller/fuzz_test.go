package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzFeedPrint checks the decoding of replay --pretty and the demo's feed, which
// print whatever the stream holds: no panic, and each body, event or not, makes
// exactly one line of valid UTF-8 without control characters (a newline in a
// name would split it, an escape sequence would reach the terminal).
func FuzzFeedPrint(f *testing.F) {
	files, err := filepath.Glob("../../schemas/examples/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no example events: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var out bytes.Buffer
		(&feed{w: &out}).print(body)
		line, ok := strings.CutSuffix(out.String(), "\n")
		if !ok || !utf8.ValidString(line) || strings.ContainsFunc(line, unicode.IsControl) {
			t.Fatalf("body %q printed as %q: want one line of printable UTF-8", body, out.String())
		}
	})
}
