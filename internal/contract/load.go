package contract

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// tree is one version of the contract: every JSON file of a schemas directory,
// decoded, by its slash path (e.g. "data/call.created.v1.json").
type tree map[string]any

// loadTree reads every .json file of fsys but those under skip (the baseline
// inside the directory it is the baseline of).
func loadTree(fsys fs.FS, skip string) (tree, error) {
	t := tree{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip != "" && p == skip {
				return fs.SkipDir
			}
			return nil
		}
		if path.Ext(p) != ".json" || strings.HasPrefix(path.Base(p), ".") {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: not JSON: %w", p, err)
		}
		t[p] = doc
		return nil
	})
	return t, err
}

// maxRefs bounds how many $refs are followed in a row from one node: a cycle of
// references ends there with an error instead of a hang.
const maxRefs = 32

// deref follows node's $ref (relative to file) until a node without one, and
// returns it with the file it is in. Keywords beside a $ref are ignored, as
// draft-07 does (the schemas never put any there: tools/asyncapi checks it).
func (t tree) deref(file string, node any) (string, any, error) {
	for range maxRefs {
		m, ok := node.(map[string]any)
		if !ok {
			return file, node, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return file, node, nil
		}
		target, frag, _ := strings.Cut(ref, "#")
		if target != "" {
			file = path.Join(path.Dir(file), target)
		}
		doc, ok := t[file]
		if !ok {
			return "", nil, fmt.Errorf("$ref %q: no file %s", ref, file)
		}
		var err error
		if node, err = pointerGet(doc, frag); err != nil {
			return "", nil, fmt.Errorf("$ref %q in %s: %w", ref, file, err)
		}
	}
	return "", nil, fmt.Errorf("more than %d $refs in a row from %s: a cycle?", maxRefs, file)
}

// pointerGet returns the value at JSON pointer p (RFC 6901) in doc.
func pointerGet(doc any, p string) (any, error) {
	if p == "" {
		return doc, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("fragment %q is not a JSON pointer", p)
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch v := doc.(type) {
		case map[string]any:
			var ok bool
			if doc, ok = v[tok]; !ok {
				return nil, fmt.Errorf("pointer %s: no %q", p, tok)
			}
		case []any:
			i := -1
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("pointer %s: no element %q", p, tok)
			}
			doc = v[i]
		default:
			return nil, fmt.Errorf("pointer %s: %q is inside a scalar", p, tok)
		}
	}
	return doc, nil
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// child is pointer p extended with token tok.
func child(p, tok string) string { return p + "/" + pointerEscaper.Replace(tok) }
