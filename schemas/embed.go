// Package schemas is callbus's published contract in machine-readable form (DESIGN
// §3): JSON Schema (draft 2020-12) for the CloudEvents envelope, for the data of
// every event type of the catalog and for the API records that data embeds, plus an
// AsyncAPI document (asyncapi.yaml) of the NATS channels. The schema files are
// embedded; Validator checks event bodies against them.
//
// The files are the source of truth for consumers. Tests keep them and the Go types
// of the events package from drifting apart.
package schemas

// The event catalog page (docs/events.md) is rendered from these files.
//go:generate go test -count=1 -run ^TestCatalogPageUpToDate$ -update .

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed envelope.json event.json headers.json data/*.json defs/*.json
var files embed.FS

// FS returns the embedded schema files: envelope.json, event.json (envelope and
// data in one), headers.json, data/<type>.json and defs/<record>.json, with the
// relative $refs between them.
func FS() fs.FS { return files }

//go:embed examples/*.json
var examples embed.FS

// Examples returns the sample event of every type (schemas/examples), by type:
// real bodies from a run against the simulator, for documentation, test seeds and
// fuzzing corpora.
func Examples() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := fs.ReadDir(examples, "examples") // embedded: cannot fail
	for _, e := range entries {
		b, _ := fs.ReadFile(examples, "examples/"+e.Name())
		out[strings.TrimSuffix(e.Name(), ".json")] = b
	}
	return out
}
