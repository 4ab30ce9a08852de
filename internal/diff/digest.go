package diff

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// transition is the part of an event's data that says what changed: the status
// before and after, the changed fields with their values, the members added and
// removed. Events without it (created, joined, ended, deleted, finalized) happen
// once per entity, so their type alone says what they are.
type transition struct {
	Previous       jsontext.Value `json:"previous,omitempty"`
	Current        jsontext.Value `json:"current,omitempty"`
	Changes        jsontext.Value `json:"changes,omitempty"`
	MembersAdded   jsontext.Value `json:"members_added,omitempty"`
	MembersRemoved jsontext.Value `json:"members_removed,omitempty"`
}

// transitionOptions read data as encoding/json would. Data is read with
// encoding/json/v2's decoder (go-json-experiment/json): in one pass that skips the
// record beside the transition, rather than validating the whole data first and
// decoding it then (a fifth of the poller's CPU in the backlog benchmark).
var transitionOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), json.MatchCaseInsensitiveNames(true))

// transitionDigest is a short digest of the transition data describes ("" for an
// event without one). It goes into the event id next to the entity's sequence, so
// that an id never names two different transitions even when Redis rolls back and
// a sequence number is used again (DESIGN §3): the same transition derived again
// keeps its id (JetStream and consumers drop the copy), a different one gets a new
// id (nothing is dropped as a duplicate of something else).
func transitionDigest(data []byte) string {
	var tr transition
	if err := json.Unmarshal(data, &tr, transitionOptions); err != nil {
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
