// Package contract compares the event contract in schemas/ with the last released
// one (the committed baseline, schemas/released/) and reports every breaking
// change: the gate of `make contract-check` (tools/contractcheck).
//
// The comparison is JSON-Schema-aware: every $ref is resolved (relative files and
// #/ pointers), and the schemas are compared node by node, old against new, at the
// same place of the data. Breaking, each reported with its type (or file) and the
// JSON pointer into the schema with its $refs resolved:
//
//   - a property removed (a field removed or renamed), or no longer required
//     (required means callbus always sends it, and consumers rely on that),
//   - a type narrowed (a JSON type dropped, number made integer, a type, const,
//     enum, pattern, format or bound added or changed where the old accepted more),
//   - a property made required,
//   - an enum value removed or renamed,
//   - an event type renamed or removed (its data file data/<type>.v<N>.json, the
//     envelope's type enum), a subject renamed (the envelope's subject patterns,
//     an AsyncAPI channel address).
//
// Additive changes pass: a new optional property, a new enum value, a type
// widened, a new type or a new version file (a breaking change is published as
// data/<type>.v<N+1>.json beside the old version), descriptions and examples.
package contract
