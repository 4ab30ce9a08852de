package event

// AttrHistory is the CloudEvents extension attribute that marks an event derived
// from history: a record read from the account export by a backfill, rather than
// by a live poll. It is a boolean, present (true) on history events only
// (events.Envelope.History).
const AttrHistory = "callbushistory"

// AttrPolicy is the CloudEvents extension attribute naming the version of the
// account's data policy that produced the event (events.Envelope.Policy),
// present only when the account has a policy.
const AttrPolicy = "callbuspolicy"
