package contract

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// schemasDir is the contract as it is in the repository.
const schemasDir = "../../schemas"

// copyContract is the repository's contract in memory: every schema file and
// asyncapi.yaml (not the baseline, not the Go files).
func copyContract(t *testing.T) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(schemasDir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "released" || p == "examples" || p == "testdata" {
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".json") || p == "asyncapi.yaml") {
			return nil
		}
		b, err := os.ReadFile(schemasDir + "/" + p)
		out[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// edit changes the JSON file f of m with change.
func edit(t *testing.T, m fstest.MapFS, f string, change func(doc map[string]any)) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(m[f].Data, &doc); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	change(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	m[f] = &fstest.MapFile{Data: b}
}

// props is the properties object of schema doc.
func props(doc map[string]any) map[string]any { return doc["properties"].(map[string]any) }

// replaceText replaces old by new in file f of m, which must contain it.
func replaceText(t *testing.T, m fstest.MapFS, f, old, new string) {
	t.Helper()
	s := string(m[f].Data)
	if !strings.Contains(s, old) {
		t.Fatalf("%s has no %q", f, old)
	}
	m[f] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(s, old, new))}
}

// TestTodayIsCompatible: the repository's contract passes against its baseline
// (what make contract-check runs).
func TestTodayIsCompatible(t *testing.T) {
	changes, err := Compare(os.DirFS(schemasDir+"/released"), os.DirFS(schemasDir), "released")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		t.Errorf("breaking: %s", c)
	}
}

// TestBreaking: each kind of breaking change fails, named by its type (or file),
// its JSON pointer and its kind.
func TestBreaking(t *testing.T) {
	cases := []struct {
		name     string
		released func(t *testing.T, m fstest.MapFS) // nil: the repository's
		current  func(t *testing.T, m fstest.MapFS)
		want     Change // About, Pointer and Kind must match one change
	}{
		{"field removed", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { delete(props(d), "call_notes") })
		}, Change{About: "call.created v1", Pointer: "/properties/call/properties/call_notes", Kind: FieldRemoved}},
		{"field renamed", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/participant.json", func(d map[string]any) {
				props(d)["phone"] = props(d)["caller_number"]
				delete(props(d), "caller_number")
			})
		}, Change{About: "participant.joined v1", Pointer: "/properties/participant/properties/caller_number", Kind: FieldRemoved}},
		{"field no longer required", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "data/team.updated.v1.json", func(d map[string]any) { d["required"] = []any{} })
		}, Change{About: "team.updated v1", Pointer: "/properties/team", Kind: FieldRemoved}},
		{"type narrowed: null refused", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/participant.json", func(d map[string]any) { props(d)["cost"] = map[string]any{"type": "number"} })
		}, Change{About: "participant.status_changed v1", Pointer: "/properties/participant/properties/cost/type", Kind: TypeNarrowed}},
		{"type narrowed: number to integer", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/participant.json", func(d map[string]any) { props(d)["cost"] = map[string]any{"type": []any{"integer", "null"}} })
		}, Change{About: "call.ended v1", Pointer: "/properties/call/properties/participants/items/properties/cost/type", Kind: TypeNarrowed}},
		{"type narrowed: string to enum", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { props(d)["direction"].(map[string]any)["enum"] = []any{"incoming", "outgoing"} })
		}, Change{About: "call.created v1", Pointer: "/properties/call/properties/direction/enum", Kind: TypeNarrowed}},
		{"field made required", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "data/team.updated.v1.json", func(d map[string]any) { d["required"] = []any{"team", "members_added"} })
		}, Change{About: "team.updated v1", Pointer: "/properties/members_added", Kind: MadeRequired}},
		{"enum value removed", func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { props(d)["direction"].(map[string]any)["enum"] = []any{"incoming", "outgoing"} })
		}, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { props(d)["direction"].(map[string]any)["enum"] = []any{"incoming"} })
		}, Change{About: "call.updated v1", Pointer: "/properties/call/properties/direction/enum", Kind: EnumRemoved}},
		{"enum value renamed", func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { props(d)["direction"].(map[string]any)["enum"] = []any{"incoming", "outgoing"} })
		}, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { props(d)["direction"].(map[string]any)["enum"] = []any{"incoming", "outbound"} })
		}, Change{About: "call.created v1", Pointer: "/properties/call/properties/direction/enum", Kind: EnumRemoved}},
		{"type renamed: data file", nil, func(t *testing.T, m fstest.MapFS) {
			m["data/team.changed.v1.json"] = m["data/team.updated.v1.json"]
			delete(m, "data/team.updated.v1.json")
		}, Change{About: "team.updated v1", Kind: TypeRenamed}},
		{"type renamed: envelope", nil, func(t *testing.T, m fstest.MapFS) {
			replaceText(t, m, "envelope.json", `"team.updated"`, `"team.changed"`)
		}, Change{About: "envelope.json", Pointer: "/properties/type/enum", Kind: TypeRenamed}},
		{"type renamed: asyncapi message", nil, func(t *testing.T, m fstest.MapFS) {
			replaceText(t, m, "asyncapi.yaml", "name: team.updated", "name: team.changed")
		}, Change{About: "asyncapi.yaml", Pointer: "/components/messages/teamUpdated/name", Kind: TypeRenamed}},
		{"subject renamed: envelope", nil, func(t *testing.T, m fstest.MapFS) {
			replaceText(t, m, "envelope.json", `"^teams/-?[0-9]+$"`, `"^team/-?[0-9]+$"`)
		}, Change{About: "envelope.json", Pointer: "/allOf/3/then/properties/subject/pattern", Kind: SubjectRenamed}},
		{"subject kind removed: envelope pattern", nil, func(t *testing.T, m fstest.MapFS) {
			replaceText(t, m, "envelope.json", `|teams/-?[0-9]+|`, `|`)
		}, Change{About: "envelope.json", Pointer: "/properties/subject/pattern", Kind: SubjectRenamed}},
		{"type narrowed: a new rule for a released type", nil, func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "envelope.json", func(d map[string]any) {
				d["allOf"] = append(d["allOf"].([]any), newTypeRule("call.created", "^calls/[0-9]+$"))
			})
		}, Change{About: "envelope.json", Pointer: fmt.Sprintf("/allOf/%d", envelopeRules(t)), Kind: TypeNarrowed}},
		{"subject renamed: channel", nil, func(t *testing.T, m fstest.MapFS) {
			replaceText(t, m, "asyncapi.yaml", "address: '{prefix}.{account}.team.updated'", "address: '{prefix}.{account}.teams.updated'")
		}, Change{About: "asyncapi.yaml", Pointer: "/channels/teamUpdated/address", Kind: SubjectRenamed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			released, current := copyContract(t), copyContract(t)
			if tc.released != nil {
				tc.released(t, released)
				tc.released(t, current)
			}
			if changes, err := Compare(released, current, ""); err != nil || len(changes) != 0 {
				t.Fatalf("unchanged: %v %v", changes, err)
			}
			tc.current(t, current)
			changes, err := Compare(released, current, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				if c.About == tc.want.About && c.Pointer == tc.want.Pointer && c.Kind == tc.want.Kind {
					t.Logf("%s", c)
					return
				}
			}
			t.Fatalf("want %s %s: %s among %d changes: %v", tc.want.About, tc.want.Pointer, tc.want.Kind, len(changes), changes)
		})
	}
}

// TestAdditive: additive changes pass, and so does a breaking change published as a
// new version of the type beside the old one.
func TestAdditive(t *testing.T) {
	cases := []struct {
		name    string
		current func(t *testing.T, m fstest.MapFS)
	}{
		{"optional field added", func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { props(d)["queue_wait"] = map[string]any{"type": "integer"} })
		}},
		{"type widened: null accepted", func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/call.json", func(d map[string]any) { props(d)["phone_number"] = map[string]any{"type": []any{"string", "null"}} })
		}},
		{"type widened: integer to number", func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "defs/participant.json", func(d map[string]any) { props(d)["duration"] = map[string]any{"type": "number"} })
		}},
		{"enum value added", func(t *testing.T, m fstest.MapFS) {
			replaceText(t, m, "envelope.json", `"metric.finalized", "metric.updated"`, `"metric.finalized", "metric.updated", "metric.deleted"`)
		}},
		{"description changed", func(t *testing.T, m fstest.MapFS) {
			edit(t, m, "data/call.created.v1.json", func(d map[string]any) { d["description"] = "A call appears." })
		}},
		{"type added", func(t *testing.T, m fstest.MapFS) {
			m["data/call.deleted.v1.json"] = m["data/call.ended.v1.json"]
			replaceText(t, m, "envelope.json", `"call.created", "call.updated", "call.ended"`, `"call.created", "call.updated", "call.ended", "call.deleted"`)
			replaceText(t, m, "asyncapi.yaml", "channels:\n", "channels:\n  callDeleted:\n    address: '{prefix}.{account}.call.deleted'\n")
		}},
		{"type added with a subject kind of its own", func(t *testing.T, m fstest.MapFS) {
			replaceText(t, m, "envelope.json", `|teams/-?[0-9]+|`, `|teams/-?[0-9]+|queues/-?[0-9]+|`)
			replaceText(t, m, "envelope.json", `"call.created", "call.updated", "call.ended"`, `"call.created", "call.updated", "call.ended", "queue.updated"`)
			edit(t, m, "envelope.json", func(d map[string]any) {
				d["allOf"] = append(d["allOf"].([]any), newTypeRule("queue.updated", "^queues/-?[0-9]+$"))
			})
		}},
		{"breaking change as a new version", func(t *testing.T, m fstest.MapFS) {
			var v2 map[string]any
			if err := json.Unmarshal(m["data/call.created.v1.json"].Data, &v2); err != nil {
				t.Fatal(err)
			}
			props(v2)["record"] = props(v2)["call"]
			delete(props(v2), "call")
			v2["required"] = []any{"record"}
			b, _ := json.Marshal(v2)
			m["data/call.created.v2.json"] = &fstest.MapFile{Data: b}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			released, current := copyContract(t), copyContract(t)
			tc.current(t, current)
			changes, err := Compare(released, current, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				t.Errorf("breaking: %s", c)
			}
		})
	}
}

// TestUnresolvableRef: a $ref that resolves to nothing is an error naming it, not
// a pass.
func TestUnresolvableRef(t *testing.T) {
	released, current := copyContract(t), copyContract(t)
	replaceText(t, current, "data/call.created.v1.json", "../defs/call.json", "../defs/kall.json")
	if _, err := Compare(released, current, ""); err == nil || !strings.Contains(err.Error(), "kall.json") {
		t.Fatalf("got %v, want an error naming defs/kall.json", err)
	}
}

// newTypeRule is an envelope rule as the envelope writes them: events of type typ
// have subjects matching pattern.
func newTypeRule(typ, pattern string) map[string]any {
	return map[string]any{
		"if":   map[string]any{"properties": map[string]any{"type": map[string]any{"const": typ}}, "required": []any{"type"}},
		"then": map[string]any{"properties": map[string]any{"subject": map[string]any{"pattern": pattern}}},
	}
}

// envelopeRules is how many allOf entries today's envelope has.
func envelopeRules(t *testing.T) int {
	var d map[string]any
	if err := json.Unmarshal(copyContract(t)["envelope.json"].Data, &d); err != nil {
		t.Fatal(err)
	}
	return len(d["allOf"].([]any))
}
