package event

import (
	"crypto/sha256"
	"encoding/hex"
)

// ID is the deterministic id of an event: the same account, type, entity and new
// state give the same id after any restart, so JetStream's duplicate window
// (Nats-Msg-Id) and consumers can both deduplicate a republished event.
//
// stateKey must identify the new state the event announces, not the time it was
// observed: e.g. "status=8@2026-11-21T10:00:03Z" (the value and the record's
// updated_time), so a later return to the same value is a different event.
func ID(account string, t Type, entity, stateKey string) string {
	h := sha256.New()
	for _, s := range []string{account, string(t), entity, stateKey} {
		h.Write([]byte(s))
		h.Write([]byte{0}) // separator: ("ab","c") and ("a","bc") differ
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
