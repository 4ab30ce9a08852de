package event

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/callbus/callbus/events"
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
func ID(account string, t events.Type, entity, stateKey string) string {
	return id(account, t, entity, []byte(stateKey))
}

// id is ID with the state key as bytes. The id is the hex of the first 16 bytes
// of the SHA-256 of the four parts, each followed by a zero byte (so ("ab","c")
// and ("a","bc") differ); hashed in one call over a stack buffer, it costs one
// allocation, the id itself (the diff derives one per event).
func id(account string, t events.Type, entity string, stateKey []byte) string {
	var buf [256]byte
	b := append(buf[:0], account...)
	b = append(b, 0)
	b = append(b, t...)
	b = append(b, 0)
	b = append(b, entity...)
	b = append(b, 0)
	b = append(b, stateKey...)
	b = append(b, 0)
	sum := sha256.Sum256(b)
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:])
}
