package sim

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkBacklog100k builds a world with 100,000 historical calls and reports the
// heap it holds.
func BenchmarkBacklog100k(b *testing.B) {
	for b.Loop() {
		s, err := New(Config{Seed: 1, Clock: NewManualClock(testStart), APIKey: "k", Backlog: 100_000})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/1e6, "MB-heap")
		runtime.KeepAlive(s)
		b.StartTimer()
	}
}

// BenchmarkListCallsPage measures one page of 1000 calls.
func BenchmarkListCallsPage(b *testing.B) {
	s, err := New(Config{Seed: 1, Clock: NewManualClock(testStart), RateClock: NewManualClock(testStart), APIKey: "k", Backlog: 100_000})
	if err != nil {
		b.Fatal(err)
	}
	s.Advance(time.Hour)
	for b.Loop() {
		r := do(b, s, "GET", "/api/v1/calls?per_page=1000&page=7", "k", nil)
		if r.code != 200 {
			b.Fatal(r.code)
		}
		b.SetBytes(int64(len(r.body)))
	}
}
