// Package diff turns observations of API records into events: pure functions from
// (previous snapshot, fetched record) to the events the change implies and the next
// snapshot. No I/O, no clocks: the same inputs give the same events with the same
// ids, which is what makes a re-diff after a crash deduplicate.
//
// Snapshots hold only what the next diff needs. Those of calls and metrics, the
// many, are binary (snapcodec.go: a version byte, varints, tracked field values
// in tagged forms that give their canonical JSON back byte for byte); the JSON
// snapshots of earlier releases are still read, and replaced at the entity's next
// observation (reported as changed, with no event). Those of users and teams are compact JSON. Each one
// carries a per-entity event sequence that goes into event ids, so an entity that
// returns to an earlier state later yields a new event, never a repeated id; ids
// also bind the transition (its digest, digest.go), so a sequence number used again
// after Redis rolled back cannot name a different change.
//
// Rules shared by every diff:
//   - no change, no event; an unchanged snapshot is reported as such so the caller
//     writes nothing;
//   - an observation older than the snapshot (by updated_time) is ignored: events
//     never go back in time; one with the same updated_time (or none) may come from
//     a stale replica and only moves things forward (see Call);
//   - fields absent from the earlier form of the call are not changes;
//   - status events chain: each one's previous equals the current of the one before
//     for the same entity.
package diff
