// Package docs holds the project's documentation pages; its test keeps them
// linked and their links true.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is a front page: short, and the way to every page of docs/.
func TestFrontPage(t *testing.T) {
	readme := read(t, "../README.md")
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines: the front page keeps to 300; reference material belongs in docs/", n)
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if !strings.Contains(readme, "(docs/"+p+")") {
			t.Errorf("README.md does not link docs/%s", p)
		}
	}
}

var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and the pages names a file of the
// repository, and every #fragment a heading of its page.
func TestLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md", "../ARCHITECTURE.md")
	for _, page := range pages {
		text := read(t, page)
		for _, m := range link.FindAllStringSubmatch(stripCode(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: no such file", page, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !hasAnchor(read(t, path), frag) {
				t.Errorf("%s: link %s: no heading with that anchor in %s", page, target, path)
			}
		}
	}
}

// hasAnchor reports whether a heading of text has the anchor GitHub gives it.
func hasAnchor(text, frag string) bool {
	for _, line := range strings.Split(stripCode(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		if anchor(strings.TrimLeft(line, "# ")) == frag {
			return true
		}
	}
	return false
}

// anchor is GitHub's fragment of a heading: lower case, punctuation dropped,
// spaces as hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		case r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stripCode removes fenced code blocks, whose brackets and hashes are not links
// or headings.
func stripCode(text string) string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
