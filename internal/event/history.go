package event

// AttrHistory is the CloudEvents extension attribute that marks an event derived
// from history: a record read from the account export by a backfill, rather than
// by a live poll. It is a boolean, present (true) on history events only
// (events.Envelope.History).
const AttrHistory = "callbushistory"
