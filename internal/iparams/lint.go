package iparams

import (
	"fmt"
	"regexp"
	"strings"
)

// sensitiveWords are what the kit's validate command looks for in a key or a
// display name to suggest marking the parameter secure.
var sensitiveWords = []string{"key", "auth", "token", "secret", "password", "passwd"}

// Lint returns warnings about declarations that are valid but probably wrong, as
// the kit's validate command does: a key or display name that suggests sensitive
// data (key, auth, token, secret, password) without secure: true; a required
// parameter that is hidden and has no default, which no one could fill in.
func Lint(d *Declarations) []Problem {
	var ws []Problem
	for _, p := range d.params {
		if !p.Secure {
			if w := sensitiveWord(p.Key, p.DisplayName); w != "" {
				ws = append(ws, Problem{Key: p.Key, Attr: "secure", Message: fmt.Sprintf(
					"the name suggests sensitive data (%q): mark it \"secure\": true", w)})
			}
		}
		if p.Required && !p.Visible && p.Default == nil {
			ws = append(ws, Problem{Key: p.Key, Attr: "visible", Message: "required but hidden and without a default: no one can fill it in unless a callback shows it"})
		}
	}
	return ws
}

func sensitiveWord(names ...string) string {
	for _, n := range names {
		n = strings.ToLower(n)
		for _, w := range sensitiveWords {
			if strings.Contains(n, w) {
				return w
			}
		}
	}
	return ""
}

// CheckScript reports every change callback declared in d that iparams.js does not
// define as a function (function name(…), or const/let/var name = a function or an
// arrow function). The check reads the source; it does not run it.
func CheckScript(d *Declarations, script []byte) Problems {
	var ps Problems
	src := string(script)
	for _, p := range d.params {
		if p.Change == "" {
			continue
		}
		name := regexp.QuoteMeta(p.Change)
		def := regexp.MustCompile(`(?m)(\bfunction\s+` + name + `\s*\(|\b(const|let|var)\s+` + name +
			`\s*=\s*(async\s+)?(function\b|\(|[A-Za-z_$][A-Za-z0-9_$]*\s*=>))`)
		if !def.MatchString(src) {
			ps = append(ps, Problem{Key: p.Key, Attr: "events", Message: fmt.Sprintf(
				"callback %q is not defined as a function in iparams.js", p.Change)})
		}
	}
	return ps
}
