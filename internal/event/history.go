package event

// AttrHistory is the CloudEvents extension attribute that marks an event derived
// from history: a record read from the account export by a backfill, rather than
// by a live poll. It is a boolean, present (true) on history events only.
const AttrHistory = "callbushistory"

// Origin is the producer's extension attributes on where an event came from. A
// history event has the same id, type, subject, time and data as the live event
// it stands for would have had: only this attribute tells them apart, and a
// consumer that does not care may ignore it.
type Origin struct {
	// History is true on events a backfill derived from the account export.
	History bool `json:"callbushistory,omitempty"`
}
