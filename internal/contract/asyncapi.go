package contract

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"go.yaml.in/yaml/v3"
)

// asyncAPI is the part of asyncapi.yaml the gate compares: the channels'
// addresses (the subjects) and the messages' names (the event types).
type asyncAPI struct {
	Channels map[string]struct {
		Address string `yaml:"address"`
	} `yaml:"channels"`
	Components struct {
		Messages map[string]struct {
			Name string `yaml:"name"`
		} `yaml:"messages"`
	} `yaml:"components"`
}

func readAsyncAPI(fsys fs.FS) (*asyncAPI, error) {
	b, err := fs.ReadFile(fsys, "asyncapi.yaml")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc asyncAPI
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// compareAsyncAPI reports a released channel address (a subject) or message name
// (an event type) that the current document no longer has. The payloads are the
// schema files, compared by Compare.
func compareAsyncAPI(released, current fs.FS) ([]Change, error) {
	old, err := readAsyncAPI(released)
	if err != nil || old == nil {
		return nil, err
	}
	cur, err := readAsyncAPI(current)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return []Change{{About: "asyncapi.yaml", Kind: SubjectRenamed, Detail: "asyncapi.yaml is gone"}}, nil
	}
	var out []Change
	addresses := map[string]bool{}
	for _, ch := range cur.Channels {
		addresses[ch.Address] = true
	}
	for _, id := range sortedKeys(old.Channels) {
		if a := old.Channels[id].Address; !addresses[a] {
			out = append(out, Change{About: "asyncapi.yaml", Pointer: "/channels/" + id + "/address", Kind: SubjectRenamed,
				Detail: fmt.Sprintf("no channel has the address %q any more", a)})
		}
	}
	var names []string
	for _, m := range cur.Components.Messages {
		names = append(names, m.Name)
	}
	for _, id := range sortedKeys(old.Components.Messages) {
		if n := old.Components.Messages[id].Name; !slices.Contains(names, n) {
			out = append(out, Change{About: "asyncapi.yaml", Pointer: "/components/messages/" + id + "/name", Kind: TypeRenamed,
				Detail: fmt.Sprintf("no message is named %q any more", n)})
		}
	}
	return out, nil
}
