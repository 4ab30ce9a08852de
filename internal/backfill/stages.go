package backfill

import (
	"time"

	"github.com/rs/zerolog"
)

// stages is where a backfill's run spent its time, for the "backfill: done" log
// line (and docs/performance.md): the wall time each stage was busy. The reader
// (read and decode) runs beside the diff and the commits, and the relay beside
// all of them, so the figures overlap and add up to more than the run. A stage
// that waits for another says so: waitDecode is the diff waiting for the reader,
// relay the commits waiting for the outbox to have room (Backfill.MaxOutbox).
type stages struct {
	job        time.Duration // creating export jobs and waiting for them
	download   time.Duration // downloading reports (and reading them for duplicates meanwhile)
	prefetch   time.Duration // the next span's job and download, made while a span is published
	dupes      time.Duration // reading a report for duplicates apart from its download
	decode     time.Duration // reading the report from disk, splitting and decoding its records
	waitDecode time.Duration // the diff waiting for decoded records
	diff       time.Duration // diffing against the snapshots (reading them), queueing the writes, the background commits' waits
	commit     time.Duration // checkpoint commits: what is queued, committed and waited for
	relay      time.Duration // waiting for the relay to publish the outbox down to MaxOutbox
}

// log adds the stages to e, in seconds.
func (s stages) log(e *zerolog.Event) *zerolog.Event {
	sec := func(d time.Duration) float64 { return d.Round(10 * time.Millisecond).Seconds() }
	return e.Dict("stages_s", zerolog.Dict().Float64("job", sec(s.job)).Float64("download", sec(s.download)).
		Float64("next_span_ahead", sec(s.prefetch)).
		Float64("dupes", sec(s.dupes)).Float64("decode", sec(s.decode)).Float64("wait_decode", sec(s.waitDecode)).
		Float64("diff", sec(s.diff)).Float64("commit", sec(s.commit)).Float64("relay_wait", sec(s.relay)))
}
