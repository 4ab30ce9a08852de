package event

import "time"

// Committed is a Message as the outbox holds it: the entry and its position. The
// store returns it when the outbox is read back (cursor's ReadOutbox and
// ReadAcked) and the relay publishes it (publish.Outbox). It is defined here,
// beside Message and Encode, so that the store and the relay name one struct
// without importing each other, and *cursor.Store serves as the relay's outbox
// as it is.
type Committed struct {
	// StreamID is the entry's position in the outbox: the Redis stream id
	// "<ms>-<seq>", increasing in commit order. The relay treats it as opaque: it
	// publishes it (publish.HeaderOutboxID) and hands it back to trim.
	StreamID    string
	CommittedAt time.Time // when the outbox took it, by the store's clock (Redis's, in ms)
	Message
}
