// Package backfill announces an account's history through the asynchronous
// account export (POST /account/export, the job, the report at job_data.path)
// instead of paged list reads: a handful of requests for years of calls. The
// report's records take the poller's own path (poll.History: diff → outbox →
// relay), so history and live share event ids and chains, and each change is
// announced once whichever saw it first.
//
// A backfill is resumable: its progress (the plan of its spans, span, job id,
// report URL, pass and record position) is committed in the account's cursors
// with the batches it belongs to, fenced by the lease; a process killed at any
// point and started again with the same request continues where the last
// commit left it, and records read twice diff to nothing against the snapshots
// they produced.
//
// History never blocks the live path: an export job that fails, stalls or
// serves a report that cannot be read is replaced, up to Backfill.MaxJobs per
// span; then the backfill gives up (ErrIncomplete), records why
// (poll.CursorBackfillIncomplete) and puts the state back where paged reads
// take over. Report records are read like list items (callcenter.DecodeRecord):
// a bad one is rejected alone; one listed twice is read from its newest copy.
package backfill
