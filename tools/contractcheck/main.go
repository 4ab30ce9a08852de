// Command contractcheck is the gate of `make contract-check`: it compares the event
// contract in schemas/ with the last released one, the committed baseline
// schemas/released/, and fails naming the type and JSON pointer of every breaking
// change (internal/contract says which changes break). Additive changes pass.
//
// Usage: go run ./tools/contractcheck [-released DIR] [-current DIR]
//
// A breaking change is published as a new version of the type, data/<type>.v<N+1>.json
// beside the old one (docs/consuming.md#versions); the baseline is refreshed only
// when a release is cut (make contract-baseline).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/callbus/callbus/internal/contract"
)

func main() {
	current := flag.String("current", "schemas", "the contract as it is: the schemas directory")
	released := flag.String("released", "schemas/released", "the last released contract: a copy of the schemas directory")
	flag.Parse()
	skip := ""
	if rel, err := filepath.Rel(*current, *released); err == nil && filepath.IsLocal(rel) {
		skip = filepath.ToSlash(rel)
	}
	changes, err := contract.Compare(os.DirFS(*released), os.DirFS(*current), skip)
	if err != nil {
		fmt.Fprintf(os.Stderr, "contract-check: %v\n", err)
		os.Exit(2)
	}
	for _, c := range changes {
		fmt.Fprintf(os.Stderr, "contract-check: breaking: %s\n", c)
	}
	if len(changes) > 0 {
		fmt.Fprintf(os.Stderr, "contract-check: %d breaking changes against %s. Publish a breaking change as a new version of the type (data/<type>.v<N+1>.json beside the old one; docs/consuming.md#versions), or undo it.\n", len(changes), *released)
		os.Exit(1)
	}
	fmt.Printf("contract-check: %s is compatible with the released contract %s\n", *current, *released)
}
