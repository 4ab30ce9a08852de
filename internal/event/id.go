package event

import (
	"crypto/sha256"
	"encoding/hex"
)

// ID is the deterministic id of an event: the same account, type, entity and new
// state give the same id after any restart, so JetStream's duplicate window
// (Nats-Msg-Id) and consumers can both deduplicate a republished event.
//
// stateKey must identify the event among the entity's events, never the time it was
// observed: the diff uses the state's epoch, the entity's event sequence and, for
// events that carry a transition, a digest of it ("3f9a0c21d7e4/5/9c1e07a2b4d3"), so
// a later return to an earlier value is a different event, and a sequence number
// reused after Redis rolled back cannot name a different transition.
func ID(account string, t Type, entity, stateKey string) string {
	h := sha256.New()
	for _, s := range []string{account, string(t), entity, stateKey} {
		h.Write([]byte(s))
		h.Write([]byte{0}) // separator: ("ab","c") and ("a","bc") differ
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
