package diff

import (
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
)

// benchCall is an ended call as the simulator's backlog serves it: assignment,
// names, notes, a recording with a transcription and one to redact, two
// participants.
func benchCall() events.Call {
	calls := schemaCalls()[0]
	c := calls[len(calls)-1]
	c.ID = 1001098
	return c
}

// BenchmarkCallDiff: one observation of an ended call, at first sight (new) and
// read again unchanged against its snapshot (unchanged): the snapshot's decode and
// encode are most of the latter.
func BenchmarkCallDiff(b *testing.B) {
	c := benchCall()
	seen := c.UpdatedTime.Add(time.Second)
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		defer cpumeter.PerOp(b)()
		for b.Loop() {
			if _, err := Call(Scope{Account: "acme", Epoch: "e1"}, nil, c, seen); err != nil {
				b.Fatal(err)
			}
		}
	})
	first, err := Call(Scope{Account: "acme", Epoch: "e1"}, nil, c, seen)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		defer cpumeter.PerOp(b)()
		for b.Loop() {
			r, err := Call(Scope{Account: "acme", Epoch: "e1"}, first.Snap, c, seen)
			if err != nil || r.Changed {
				b.Fatal(err, r.Changed)
			}
		}
		b.ReportMetric(float64(len(first.Snap)), "snapshot-B")
	})
	b.Run("state", func(b *testing.B) {
		b.ReportAllocs()
		defer cpumeter.PerOp(b)()
		for b.Loop() {
			if _, err := CallStateOf(first.Snap); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMetricDiff: a final metric at first sight (new) and read again
// unchanged against its snapshot (unchanged).
func BenchmarkMetricDiff(b *testing.B) {
	ms := schemaMetrics()[0]
	m := ms[0]
	st := CallState{Ended: true, EndedAt: m.UpdatedTime.Add(-time.Minute)}
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		defer cpumeter.PerOp(b)()
		for b.Loop() {
			if r, err := Metric(Scope{Account: "acme"}, nil, m, st); err != nil || r.Snap == nil {
				b.Fatal(err)
			}
		}
	})
	first, err := Metric(Scope{Account: "acme"}, nil, m, st)
	if err != nil || first.Snap == nil {
		b.Fatal(err)
	}
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		defer cpumeter.PerOp(b)()
		for b.Loop() {
			r, err := Metric(Scope{Account: "acme"}, first.Snap, m, st)
			if err != nil || r.Changed {
				b.Fatal(err, r.Changed)
			}
		}
		b.ReportMetric(float64(len(first.Snap)), "snapshot-B")
	})
}
