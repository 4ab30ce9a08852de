package main

import (
	"fmt"
	"strings"
)

// manPage is poller(1) in roff, made of the same text as `poller --help` and
// each command's --help (the command table): docs/poller.1, which
// TestManPageCurrent keeps current (`make generate` rewrites it).
//
//go:generate go test -count=1 -run ^TestManPageCurrent$ -update .
func manPage() string {
	var b strings.Builder
	b.WriteString(".\\\" Generated from `poller --help` and each command's --help by `make generate`; do not edit.\n")
	b.WriteString(".TH POLLER 1 \"\" \"callbus\" \"callbus manual\"\n")
	b.WriteString(".SH NAME\npoller \\- poll a call-center API and publish its changes to NATS JetStream\n")
	b.WriteString(".SH SYNOPSIS\n.B poller\n[\\fIcommand\\fR] [\\fIflags\\fR]\n")
	head, _, _ := strings.Cut(usage, "\ncommands:\n")
	_, desc, _ := strings.Cut(head, "\n\n")
	b.WriteString(".SH DESCRIPTION\n" + roff(strings.TrimSpace(desc)) + "\n")
	b.WriteString(".SH COMMANDS\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, ".SS %s\n%s\n", roff("poller "+strings.Join(c.words, " ")), roff(c.summary))
		if h := helpText(c); h != "" {
			fmt.Fprintf(&b, ".PP\n.nf\n%s.fi\n", roff(h))
		}
	}
	for _, sec := range strings.Split(strings.TrimSpace(usageMore), "\n\n") {
		title, body, _ := strings.Cut(sec, ":\n")
		fmt.Fprintf(&b, ".SH %s\n.nf\n%s\n.fi\n", strings.ToUpper(title), roff(body))
	}
	b.WriteString(".SH SEE ALSO\ndocs/operations.md, docs/getting-started.md, `poller config docs`\n")
	return b.String()
}

// roff escapes text for roff: backslashes, and a leading dot or quote.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
