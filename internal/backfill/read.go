package backfill

import (
	"fmt"
	"io"
	"slices"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
)

// sink receives the records of the passes read, one at a time, with their
// position in their pass (counted over the pass's resources, in report order).
type sink interface {
	// begin says the records that follow are of pass (a read of two passes at
	// once: see passReader.read); not called for the read's first pass.
	begin(pass int) error
	call(pos int64, c events.Call) error
	metric(pos int64, m events.CallMetric) error
	user(pos int64, u events.User) error
	team(pos int64, t events.Team) error
	// skip passes over the record at pos: rejected, or an older copy of a record
	// the report lists again.
	skip(pos int64)
}

// passReader reads the passes of one report as the live client reads a list
// page: each record decoded and checked on its own (callcenter.DecodeRecord), a
// bad one rejected alone (counted and logged through the client's rejection
// hook, by id, field and reason) while the rest go on.
type passReader struct {
	api   *callcenter.Client
	op    string   // names the report in rejections ("export job 12 report")
	want  []string // the resources the job exported; others are skipped
	older dupes    // copies of records listed again, passed over
	from  int64    // positions of the read's first pass before it were committed by an earlier run
}

// read streams the records of the passes from first to last (0 or 1) to s in
// one read of r: one record in memory at a time, whatever the report's size.
// Reading both passes at once needs every resource of pass 0 before those of
// pass 1 in the report (layout.inOrder); a pass-0 resource found after pass 1
// began is an error. Resources of other passes, or not requested, and unknown
// keys are passed over unread. A report that is not JSON, or breaks off, fails
// with a *reportError; an error of s is returned as it is.
func (pr *passReader) read(r io.Reader, first, last int, s sink) error {
	sc := newScanner(r)
	var pos [2]int64
	cur := first
	return sc.object(func(key string) error {
		pass := passOf(key)
		if !slices.Contains(pr.want, key) || pass < first || pass > last {
			_, err := sc.value(false)
			return err
		}
		switch {
		case pass < cur:
			return fmt.Errorf("backfill: report: %s after the resources of pass %d (a read of both passes needs it before)", key, cur)
		case pass > cur:
			if err := s.begin(pass); err != nil {
				return err
			}
			cur = pass
		}
		from := int64(0)
		if pass == first {
			from = pr.from
		}
		return sc.array(key, func(raw []byte) error {
			p := pos[pass]
			pos[pass]++
			switch {
			case p < from:
				return nil
			case pr.older.has(pass, p):
				s.skip(p)
				return nil
			}
			return pr.record(key, p, raw, s)
		})
	})
}

// record decodes one record of resource key and hands it to s, or passes over it
// when it is rejected.
func (pr *passReader) record(key string, pos int64, raw []byte, s sink) error {
	switch key {
	case callcenter.ExportCalls:
		return decoded(pr, key, pos, raw, s, s.call)
	case callcenter.ExportCallMetrics:
		return decoded(pr, key, pos, raw, s, s.metric)
	case callcenter.ExportUsers:
		return decoded(pr, key, pos, raw, s, s.user)
	default:
		return decoded(pr, key, pos, raw, s, s.team)
	}
}

func decoded[T any](pr *passReader, key string, pos int64, raw []byte, s sink, fn func(int64, T) error) error {
	var v T
	if !callcenter.DecodeRecord(pr.api, pr.op, key, raw, &v) {
		s.skip(pos)
		return nil
	}
	return fn(pos, v)
}
