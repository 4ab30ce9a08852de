package iparams

import (
	"fmt"
	"strings"
)

// Docs renders every parameter as a Markdown table: key, environment variable (when
// EnvPrefix is set), type with its options or bounds, default, required, secure and
// description. The output is deterministic and ends with a newline, for a README
// block that a test keeps in step.
func Docs(d *Declarations) string {
	var b strings.Builder
	env := d.EnvPrefix != ""
	cols := []string{"Key"}
	if env {
		cols = append(cols, "Environment variable")
	}
	cols = append(cols, "Type", "Default", "Required", "Secure", "Description")
	row(&b, cols)
	seps := make([]string, len(cols))
	for i := range seps {
		seps[i] = "---"
	}
	row(&b, seps)
	for _, p := range d.params {
		cells := []string{code(p.Key)}
		if env {
			cells = append(cells, code(d.EnvVar(p.Key)))
		}
		cells = append(cells, docType(p), docDefault(p), yes(p.Required), yes(p.Secure), docDescription(p))
		row(&b, cells)
	}
	return b.String()
}

func row(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n")
}

func code(s string) string {
	if s == "" {
		return ""
	}
	// Entities show literally in a code span; only the pipe needs escaping there.
	return "`" + strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`) + "`"
}

// cellEscaper keeps a cell one cell: pipes escaped, and angle brackets as entities
// so that "<account>" is not taken for an HTML tag and dropped.
var cellEscaper = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")

// cell makes s safe inside a table cell: one line, escaped.
func cell(s string) string {
	return cellEscaper.Replace(strings.Join(strings.Fields(s), " "))
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

func docType(p Param) string {
	t := string(p.Type)
	switch {
	case p.Type.HasOptions():
		t += ": " + cell(strings.Join(p.Options, ", "))
	case p.Type == Domain:
		t += " (" + cell("https://<account>."+p.DomainSuffix) + ")"
	case p.Min != nil && p.Max != nil:
		t += fmt.Sprintf(", %d to %d", *p.Min, *p.Max)
	case p.Min != nil:
		t += fmt.Sprintf(", at least %d", *p.Min)
	case p.Max != nil:
		t += fmt.Sprintf(", at most %d", *p.Max)
	}
	return t
}

func docDefault(p Param) string {
	if p.Default == nil {
		return ""
	}
	return code(text(p.Default))
}

func docDescription(p Param) string {
	desc := "**" + cell(p.DisplayName) + "**"
	if p.Description != "" {
		desc += ": " + cell(p.Description)
	}
	if !p.Visible {
		desc += " (hidden on the setup page)"
	}
	return desc
}
