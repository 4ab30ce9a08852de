package event

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/callbus/callbus/events"
)

// Version is one version of a type's data published beside the one the diff
// produces (events.Version(t), the events package's Go types) while a breaking
// change's deprecation window lasts (docs/consuming.md#versions). Its schema is
// schemas/data/<type>.v<N>.json; its events go to <prefix>.<account>.<type>.v<N>
// (version 1: <prefix>.<account>.<type>) with their own ids.
type Version struct {
	N int // the version, ≥ 1, not events.Version(t)
	// From makes this version's data from the data the diff produced. It must be
	// deterministic: a republished event keeps its id and its data.
	From func(data json.RawMessage) (json.RawMessage, error)
}

// Published lists, by type, the versions the poller publishes beside each type's
// current one. It is empty in this release: every type has one version. A release
// that makes a breaking change to a type adds the old version here (with a From
// that makes the old data from the new) for the deprecation window.
var Published = map[events.Type][]Version{}

// VersionChoice is the setting event_versions: which of a type's versions the poller
// publishes while it has more than one.
type VersionChoice string

// The values of event_versions.
const (
	VersionsAll    VersionChoice = "all"    // every version, side by side (the default)
	VersionsNewest VersionChoice = "newest" // the newest only: every consumer has moved
	VersionsOldest VersionChoice = "oldest" // the oldest only: no consumer has moved yet
)

// Versions returns the envelopes to publish for e, an envelope as New makes it
// (events.Version of its type), in the order to commit them: one per version of
// its type that choice selects among e's and those published lists for its type,
// by increasing version. The others than e carry their version's dataschema and
// data and an id derived from e's and the version, so that each is as
// deterministic as e and two versions never share an id (nor a Nats-Msg-Id).
func Versions(e events.Envelope, published map[events.Type][]Version, choice VersionChoice) ([]events.Envelope, error) {
	extra := published[e.Type]
	if len(extra) == 0 {
		return []events.Envelope{e}, nil
	}
	current := events.Version(e.Type)
	all := append([]Version{{N: current}}, extra...)
	slices.SortFunc(all, func(a, b Version) int { return a.N - b.N })
	switch choice {
	case VersionsNewest:
		all = all[len(all)-1:]
	case VersionsOldest:
		all = all[:1]
	case VersionsAll, "":
	default:
		return nil, fmt.Errorf("event %s: event_versions %q: want %s, %s or %s", e.ID, choice, VersionsAll, VersionsNewest, VersionsOldest)
	}
	out := make([]events.Envelope, 0, len(all))
	for _, v := range all {
		if v.N == current {
			out = append(out, e)
			continue
		}
		data, err := v.From(e.Data)
		if err != nil {
			return nil, fmt.Errorf("event %s: data of %s version %d: %w", e.ID, e.Type, v.N, err)
		}
		o := e
		o.ID = id(e.ID, e.Type, e.Subject, fmt.Appendf(nil, "v%d", v.N))
		o.DataSchema = events.DataSchema(e.Type, v.N)
		o.Data = data
		out = append(out, o)
	}
	return out, nil
}
