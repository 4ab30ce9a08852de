package schemas

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/docblock"
)

// update rewrites the generated block of docs/events.md: go test ./schemas -update
var update = flag.Bool("update", false, "rewrite the event catalog's generated block in docs/events.md")

const catalogPage = "../docs/events.md"

var catalogMarkers = docblock.Markers{Begin: "<!-- catalog:begin -->", End: "<!-- catalog:end -->"}

// The event catalog of the docs is rendered from the schema files and their
// examples, never copied by hand: a changed schema or example fails this test
// until the page is regenerated.
func TestCatalogPageUpToDate(t *testing.T) {
	order := make([]string, len(events.Catalog))
	for i, info := range events.Catalog {
		order[i] = string(info.Type)
	}
	docs, err := renderCatalog(FS(), Examples(), order)
	if err != nil {
		t.Fatal(err)
	}
	docblock.Check(t, catalogPage, catalogMarkers, docs, *update, "`go test ./schemas -update` (or `make generate`)")
}

// node is the part of a JSON Schema the catalog shows.
type node struct {
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Type        json.RawMessage `json:"type"`
	Format      string          `json:"format"`
	Personal    string          `json:"x-callbus-personal"`
	Ref         string          `json:"$ref"`
	Enum        []any           `json:"enum"`
	Items       *node           `json:"items"`
	Properties  json.RawMessage `json:"properties"`
	Required    []string        `json:"required"`
	Examples    []any           `json:"examples"`
}

// property is one property of an object schema, in the file's order.
type property struct {
	name string
	node node
}

// properties decodes an object schema's properties in the order the file lists them.
func (n node) properties() ([]property, error) {
	if len(n.Properties) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(n.Properties))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out []property
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var p property
		p.name, _ = tok.(string)
		if err := dec.Decode(&p.node); err != nil {
			return nil, fmt.Errorf("property %s: %w", p.name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func readNode(fsys fs.FS, name string) (node, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return node{}, err
	}
	var n node
	if err := json.Unmarshal(b, &n); err != nil {
		return node{}, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

// renderCatalog renders the catalog block: a table of the types (in the order
// given, each with its current data/<type>.v<N>.json), then each type's data and example, then the
// records the data embeds (defs/).
func renderCatalog(fsys fs.FS, examples map[string][]byte, order []string) (string, error) {
	dataFiles := make([]string, len(order))
	for i, typ := range order {
		dataFiles[i] = fmt.Sprintf("data/%s.v%d.json", typ, events.Version(events.Type(typ)))
	}
	defFiles, err := fs.Glob(fsys, "defs/*.json")
	if err != nil {
		return "", err
	}
	slices.Sort(defFiles)
	var b strings.Builder
	b.WriteString("<!-- Generated from schemas/data, schemas/defs and schemas/examples by `go test ./schemas -update`: edit those, not this block. -->\n\n")
	b.WriteString("| type | subject | what it announces |\n|---|---|---|\n")
	types := order
	nodes := make([]node, len(dataFiles))
	for i, f := range dataFiles {
		if nodes[i], err = readNode(fsys, f); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | `<prefix>.<account>.%s` | %s |\n", types[i], anchor(types[i]), types[i], cell(nodes[i].Description))
	}
	for i, typ := range types {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", typ, nodes[i].Description)
		if err := writeProperties(&b, nodes[i]); err != nil {
			return "", fmt.Errorf("%s: %w", dataFiles[i], err)
		}
		ex, ok := examples[typ]
		if !ok {
			return "", fmt.Errorf("no example of %s in schemas/examples", typ)
		}
		fmt.Fprintf(&b, "\n<details><summary>Example (<code>schemas/examples/%s.json</code>)</summary>\n\n```json\n%s\n```\n\n</details>\n",
			typ, strings.TrimSpace(string(ex)))
	}
	b.WriteString("\n## Records\n\nThe API's records as the events' data carries them.\n")
	for _, f := range defFiles {
		n, err := readNode(fsys, f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n### %s\n\n`schemas/%s`. %s\n\n", defName(f), f, n.Description)
		if err := writeProperties(&b, n); err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
	}
	return b.String(), nil
}

// writeProperties writes an object schema's properties as a table.
func writeProperties(b *strings.Builder, n node) error {
	props, err := n.properties()
	if err != nil {
		return err
	}
	if len(props) == 0 {
		return nil
	}
	b.WriteString("| field | type | always sent | meaning |\n|---|---|---|---|\n")
	for _, p := range props {
		req := ""
		if slices.Contains(n.Required, p.name) {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", p.name, typeOf(p.node), req, cell(describe(p.node)))
	}
	return nil
}

// typeOf renders a property's type: a record links to its section.
func typeOf(n node) string {
	switch {
	case n.Ref != "":
		name := defName(n.Ref)
		return fmt.Sprintf("[%s](#%s)", name, anchor(name))
	case n.Items != nil:
		return listOf(n.Type, "list of "+typeOf(*n.Items))
	case len(n.Enum) > 0:
		vals := make([]string, len(n.Enum))
		for i, v := range n.Enum {
			j, _ := json.Marshal(v)
			vals[i] = "`" + string(j) + "`"
		}
		return "one of " + strings.Join(vals, ", ")
	}
	t := typeNames(n.Type)
	if t == "" {
		t = "any JSON value"
	}
	if n.Format != "" {
		t += " (" + n.Format + ")"
	}
	if n.Personal != "" {
		t += ", personal data (" + n.Personal + ")"
	}
	return t
}

// listOf names a list that may also be null.
func listOf(raw json.RawMessage, list string) string {
	if strings.Contains(string(raw), `"null"`) {
		return list + " or null"
	}
	return list
}

// typeNames renders "string" or ["string", "null"] as "string" or "string or null".
func typeNames(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return strings.Join(many, " or ")
}

// describe is a property's description, with its examples when it has some.
func describe(n node) string {
	d := n.Description
	if len(n.Examples) > 0 {
		ex := make([]string, len(n.Examples))
		for i, v := range n.Examples {
			j, _ := json.Marshal(v)
			ex[i] = "`" + string(j) + "`"
		}
		d = strings.TrimSpace(d + " E.g. " + strings.Join(ex, ", ") + ".")
	}
	return d
}

// defName is a record's name from its file or reference: "../defs/call-status.json"
// is "call-status".
func defName(ref string) string { return strings.TrimSuffix(path.Base(ref), ".json") }

// anchor is the fragment GitHub gives a heading of that text.
func anchor(heading string) string {
	return strings.NewReplacer(".", "", "_", "_", " ", "-").Replace(strings.ToLower(heading))
}

// cell keeps a text on one table row.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
