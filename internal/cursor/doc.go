// Package cursor is callbus's Redis store for one account: the snapshots the
// differ compares against, the cursors of the poller, the index of open and
// terminal calls, the outbox of events waiting for the relay, and the leader lease
// with its fencing token.
//
// # Key layout
//
// Every key of an account carries the account in a hash tag, so that all of them
// hash to one Redis Cluster slot and the multi-key scripts below stay legal there:
//
//	callbus:{<account>}:lease        hash {holder, token, since}, PX ttl: the leader lease
//	                                 (since: the term's start, unix ms by the Redis clock)
//	callbus:{<account>}:lease:seq    string counter (INCR) of fencing tokens; never expires
//	callbus:{<account>}:fence        string: token of the newest write that was applied
//	callbus:{<account>}:snap:<kind>  hash entity id -> opaque snapshot bytes, one per kind
//	callbus:{<account>}:s:<kind>:<b> hash: the snapshots of the kinds keyed by call id
//	                                 (DefaultPruneKinds) whose ids share id>>5 = b, each
//	                                 cut into chunks: field id&31, then "<field>.1".."<field>.3"
//	callbus:{<account>}:sb:<kind>    set of the kind's bucket numbers b that hold a
//	                                 snapshot (the script that empties one removes it)
//	callbus:{<account>}:kinds        set of the snapshot kinds ever written (for stats)
//	callbus:{<account>}:open         sorted set of open call ids, score = created (unix ms)
//	callbus:{<account>}:t:<b>        hash: terminal calls whose ids share id>>7 = b,
//	                                 field id&127 -> ended (unix ms)
//	callbus:{<account>}:tb           sorted set of terminal buckets b, score = earliest end
//	callbus:{<account>}:terminal     sorted set of the other terminal call ids, score = ended
//	callbus:{<account>}:cursor       hash cursor name -> value
//	callbus:{<account>}:outbox       stream of events: one batch entry per commit, fields n (events)
//	                                 and events (all of them, compact: outbox_batch.go), under the
//	                                 last of n stream ids reserved for them, one per event; entries
//	                                 of one event (fields id, subject, data, headers, type, time)
//	                                 from earlier releases are read as well
//	callbus:{<account>}:outbox:meta  hash {last, token, more, trimmed, acked}: the outbox's last
//	                                 generated id and the term that wrote it, its events beyond one
//	                                 per entry, the newest id acknowledged inside its first entry, the
//	                                 events in outbox:acked (lua/commit.lua, lua/trim.lua)
//	callbus:{<account>}:outbox:acked stream of the acknowledged entries kept for a retention (same ids, fields)
//	callbus:{<account>}:outbox:acked:marks sorted set: the newest entry of each trim, score = acknowledged (ms)
//	callbus:{<account>}:outbox:withdrawn hash outbox id -> times the relay withdrew the entry from the stream
//	callbus:{<account>}:ops          hash: what the leader last did (cycle.<resource>, rollback_check);
//	                                 diagnostics for `poller state`, written unfenced, never read back
//	callbus:{<account>}:ops:requests list of operators' requests (JSON) the leader acts on (rewind)
//	callbus:{<account>}:ops:audit    list of operators' actions (JSON, newest first, at most 100)
//
// Buckets are what keeps the state small: Redis stores a hash of at most 128
// fields of at most 64 bytes as a listpack, a few bytes per entry, where one
// large hash or sorted set costs some 70 to 100 bytes per entry on top of the data
// (measure with MEMORY USAGE and OBJECT ENCODING; BenchmarkTrackedCallMemory). A
// snapshot of a bucketed kind longer than four chunks, or under an id that is not
// a non-negative integer, stays in the kind's single hash (snap:<kind>), as every
// snapshot and terminal call did in releases before the buckets: readers look in
// both (the single hash wins), and a write puts a snapshot in one place and removes
// it from the other, so a state written before the upgrade is read as it is and
// moves into the buckets as its entities change or are pruned.
//
// # Protocol
//
// A replica becomes the account's leader with [Store.Acquire], which hands out a
// fencing token from lease:seq; it keeps the lease with [Store.Renew] well before
// the TTL ends and gives it up with [Store.Release]. Every write of the poller goes
// through [Store.Commit] (or [Store.Prune]): one Lua script that first checks that
// the lease still holds this holder and token and that the token is not older than
// the fence (and, for a commit, that the outbox has not gone back behind the
// caller's last commit: Batch.OutboxSeen, [ErrRolledBack]), and only then writes
// the snapshots, the call index, the cursors and the outbox entries together. A
// process that lost its lease (paused, partitioned,
// slow) therefore cannot write anything, however late its commit arrives: it gets
// [ErrStaleLeader] and nothing changed. Snapshots and the events they imply advance
// together, which is why events go to an outbox instead of straight to NATS.
//
// The relay reads the outbox in commit order with [Store.ReadOutbox] or
// [Store.WaitOutbox], one event per record, each under its own stream id (a
// commit's events share one batch entry, see outbox_batch.go), publishes, and
// trims what was acknowledged with
// [Store.TrimOutbox], which keeps the acknowledged entries for a retention
// ([Store.ReadAcked]): JetStream acknowledges before it syncs to disk, and the
// relay heals a stream that lost acknowledged messages from them. Reading and
// trimming are not fenced: the relay may run anywhere, and trimming up to an
// acknowledged id is idempotent.
//
// An account no longer served keeps its keys until an operator removes them:
// [OutboxAccounts] lists the accounts with an outbox (a fleet drains those it no
// longer configures), and [Store.Forget], under the account's lease, deletes
// every key under the account's prefix and no other.
//
// # Limits
//
// Tokens strictly increase for as long as Redis keeps lease:seq. A Redis that
// restarts without persistence (or fails over to a replica that missed writes)
// loses the counter and starts again; Acquire then seeds the counter above the
// fence when the fence survived, and otherwise tokens restart at 1. That stays
// safe because a commit must match the lease's holder as well as its token, and
// the lease itself was lost with the rest: a process from before the restart must
// acquire again before it can write. Holders must therefore be unique per process
// (host name, pid and a random suffix, say).
//
// The types of a commit ([Batch], [Snapshot], [Tracked], [Lease], [event.Message])
// and the sentinel errors are the vocabulary of this protocol; poll uses them
// through its own Store and Leaser interfaces (ARCHITECTURE.md).
//
// A [Store] is safe for concurrent use by multiple goroutines.
package cursor
