package main

import (
	"bytes"
	"github.com/callbus/callbus/schemas"
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
	for _, b := range schemas.Examples() {
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
