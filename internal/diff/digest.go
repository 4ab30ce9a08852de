package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// transition is the part of an event's data that says what changed: the status
// before and after, the changed fields with their values, the members added and
// removed. Events without it (created, joined, ended, deleted, finalized) happen
// once per entity, so their type alone says what they are.
type transition struct {
	Previous       json.RawMessage `json:"previous,omitempty"`
	Current        json.RawMessage `json:"current,omitempty"`
	Changes        json.RawMessage `json:"changes,omitempty"`
	MembersAdded   json.RawMessage `json:"members_added,omitempty"`
	MembersRemoved json.RawMessage `json:"members_removed,omitempty"`
}

// transitionDigest is a short digest of the transition data describes ("" for an
// event without one). It goes into the event id next to the entity's sequence, so
// that an id never names two different transitions even when Redis rolls back and
// a sequence number is used again (DESIGN §3): the same transition derived again
// keeps its id (JetStream and consumers drop the copy), a different one gets a new
// id (nothing is dropped as a duplicate of something else).
func transitionDigest(data []byte) string {
	var tr transition
	if err := json.Unmarshal(data, &tr); err != nil {
		return "" // data is an object the diff itself marshalled: cannot happen
	}
	if tr.Previous == nil && tr.Current == nil && tr.Changes == nil && tr.MembersAdded == nil && tr.MembersRemoved == nil {
		return ""
	}
	h := sha256.New()
	for _, part := range [][]byte{tr.Previous, tr.Current, tr.Changes, tr.MembersAdded, tr.MembersRemoved} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}
