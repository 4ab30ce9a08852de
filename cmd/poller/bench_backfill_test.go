package main

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// BenchmarkBackfill: `poller backfill` of CALLBUS_BENCH_HISTORY (1,000,000)
// historic calls spread over three years (so two export jobs), at plan 100 (100
// requests a minute for the whole account), from no state until every event is
// in the stream. Reports the wall time, the API requests used (the paged lists
// would need one per 1,000 calls and as many for metrics), events per second and
// the poller's peak RSS.
func BenchmarkBackfill(b *testing.B) {
	n := envInt("CALLBUS_BENCH_HISTORY", 1_000_000)
	for range b.N {
		bd := startBed(b, redistest.Start, 100, sim.Config{Seed: 3, Agents: 40, CallRate: -1, Plan: 100,
			History: n, HistorySpan: 3 * 365 * 24 * time.Hour})
		w, js, store := bd.world, bd.stream(b), bd.store
		env := bd.env("bench-backfill", simtest.FreeAddr(b))
		start := time.Now()
		c := startCommand(b, env, "backfill", "--since", w.Sim.Start().AddDate(-3, 0, -7).Format(time.RFC3339),
			"--until", w.Sim.Start().Format(time.RFC3339), "--dir", b.TempDir(), "--progress", "log")
		if err := <-c.wait(90 * time.Minute); err != nil {
			b.Fatalf("backfill: %v\n%s", err, c.stderr.String())
		}
		elapsed := time.Since(start)
		ru := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		peakMB := float64(ru.Maxrss) / 1024 // KiB on Linux
		var done struct {
			Jobs     int   `json:"jobs"`
			Requests int64 `json:"requests"`
			Records  int64 `json:"records"`
			Events   int64 `json:"events"`
		}
		v, _, err := store.GetCursor(b.Context(), "backfill.done")
		if err != nil || json.Unmarshal([]byte(v), &done) != nil {
			b.Fatalf("no backfill summary (%v): %q", err, v)
		}
		if got := subjectCount(b, js, "callcenter.acme.metric.finalized"); got != uint64(n) {
			b.Fatalf("%d metrics finalized of %d calls", got, n)
		}
		events := float64(streamMsgs(b, js))
		b.ReportMetric(elapsed.Seconds(), "wall-s")
		b.ReportMetric(float64(done.Requests), "api-requests")
		b.ReportMetric(float64(2*((n+999)/1000)), "paged-requests")
		b.ReportMetric(events/elapsed.Seconds(), "events/s")
		b.ReportMetric(peakMB, "peak-RSS-MB")
		b.Logf("%d calls, %d records, %.0f events in %s with %d export jobs and %d API requests (paged lists: at least %d); poller CPU %s, peak RSS %.1f MB",
			n, done.Records, events, elapsed.Round(time.Second), done.Jobs, done.Requests, 2*((n+999)/1000), cpu.Round(time.Second), peakMB)
	}
}
