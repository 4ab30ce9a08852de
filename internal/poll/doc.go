// Package poll schedules the reads of the call-center API under the account's rate
// budget and runs poll cycles: fetch → diff → one atomic commit to the store, after
// which the relay publishes the committed events. Leadership runs the cycles only
// while this replica holds the account's lease.
//
// It declares the roles it needs of the store (Store, Leaser) and speaks the
// store's commit vocabulary: it imports cursor for its value types and sentinel
// errors (Batch, Tracked, Lease, ErrStaleLeader, ...), never for *cursor.Store
// (ARCHITECTURE.md says why); a batch's outbox entries are event.Messages.
// Optional collaborators (tracer, the relay's wake-up, observers) are
// functional options.
//
// The account's data policy (Config.Policy) reaches the records before the
// poller does (the client redacts them); the poller publishes only the event
// types it wants, stamps events with its version, and re-baselines the
// snapshots when the state was written under another version (policy.go).
package poll
