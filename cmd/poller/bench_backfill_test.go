package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// BenchmarkBackfill: `poller backfill` of CALLBUS_BENCH_HISTORY (1,000,000)
// historic calls spread over three years (so six export jobs, the spans ramping
// up from a month), at plan 100 (100 requests a minute for the whole account),
// from no state until every event is in the stream; then, in the same run, the live path's backlog of
// CALLBUS_BENCH_BACKLOG (100,000) calls (as BenchmarkBacklog, without JetStream's
// own rate), so the two rates come from the same machine minutes apart
// (CALLBUS_BENCH_BACKFILL_ALONE=1 leaves the backlog out). Reports, for each, the
// events per second, the CPU per event of the poller, Redis and the test
// process (the NATS server, the simulator), the poller's peak RSS; for the
// backfill also the API requests used (the paged lists would need one per 1,000
// calls and as many for metrics) and where the poller's time went by stage (the
// "backfill: done" log line). CALLBUS_BENCH_CPUPROFILE, CALLBUS_BENCH_TRACE and
// CALLBUS_BENCH_HEAPPROFILE profile the backfill's poller (bench_profile_test.go).
func BenchmarkBackfill(b *testing.B) {
	n := envInt("CALLBUS_BENCH_HISTORY", 1_000_000)
	for range b.N {
		hist := backfillOnce(b, n)
		hist.report(b, "backfill", "")
		if os.Getenv("CALLBUS_BENCH_BACKFILL_ALONE") != "" {
			continue
		}
		back := backlogRates(b, envInt("CALLBUS_BENCH_BACKLOG", 100_000))
		back.report(b, "backlog", "backlog-")
		b.ReportMetric(hist.rate()/back.rate(), "backfill/backlog")
		b.Logf("backfill ÷ backlog: %.2f (events/s), %.2f (poller CPU per event), %.2f (poller + Redis CPU per event)",
			hist.rate()/back.rate(), hist.perEvent(hist.poller)/back.perEvent(back.poller),
			(hist.perEvent(hist.poller)+hist.redis*1e6/hist.events)/(back.perEvent(back.poller)+back.redis*1e6/back.events))
	}
}

// procRun is what one end-to-end run cost, per process.
type procRun struct {
	events  float64
	elapsed time.Duration
	poller  time.Duration // the poller's CPU (rusage of the exited child)
	redis   float64       // CPU seconds Redis spent meanwhile
	test    time.Duration // the test process's CPU meanwhile: the NATS server, the simulator, the wait
	peakMB  float64       // the poller's VmHWM (sampleMemory)
	what    string        // the run's own details
}

func (r procRun) rate() float64 { return r.events / r.elapsed.Seconds() }

// perEvent is d in µs per event.
func (r procRun) perEvent(d time.Duration) float64 { return micros(d) / r.events }

// report logs r and reports its figures as metrics prefixed with prefix.
func (r procRun) report(b *testing.B, name, prefix string) {
	b.ReportMetric(r.rate(), prefix+"events/s")
	b.ReportMetric(r.poller.Seconds()/r.events*1e4, prefix+"cpu-s/10k-events")
	b.ReportMetric(r.redis/r.events*1e4, prefix+"redis-cpu-s/10k-events")
	b.ReportMetric(r.peakMB, prefix+"peak-RSS-MB")
	b.Logf("%s: %s; %.0f events in %s, %.0f events/s; CPU per event: poller %.1f µs, Redis %.1f µs, test process (NATS server, simulator, the wait) %.1f µs; poller peak RSS (VmHWM) %.1f MB",
		name, r.what, r.events, r.elapsed.Round(time.Millisecond), r.rate(), r.perEvent(r.poller), r.redis*1e6/r.events, r.perEvent(r.test), r.peakMB)
}

// stagesLine is the poller's "backfill: done" log line, which says where its
// time went.
var stagesLine = regexp.MustCompile(`(?m)^.*"backfill: (done|outbox published)".*$`)

// backfillOnce runs `poller backfill` of n historic calls and measures it.
func backfillOnce(b *testing.B, n int) procRun {
	bd := startBed(b, redistest.Start, 100, sim.Config{Seed: 3, Agents: 40, CallRate: -1, Plan: 100,
		History: n, HistorySpan: 3 * 365 * 24 * time.Hour})
	w, js, store := bd.world, bd.stream(b), bd.store
	rdb := bd.redis.Client(b)
	addr := simtest.FreeAddr(b)
	// A lease of 15 s: Redis calls may take 5 s (a quarter of it) before they
	// fail. poller backfill exits on a failed commit (run it again to resume),
	// where the live poller retries its cycle; on a machine shared with other
	// work a commit may take over the 1 s that the tests' 3 s lease allows.
	env := append(bd.env("bench-backfill", addr), profileEnv()...)
	env = append(env, "CALLBUS_LEASE_TTL_SECONDS=15")
	pollerBinary(b) // built before the clock starts: the first run of a process builds it
	redisBefore := redisCPU(b, rdb)
	start, testCPU := time.Now(), cpumeter.Process()
	c := startCommand(b, env, "backfill", "--since", w.Sim.Start().AddDate(-3, 0, -7).Format(time.RFC3339),
		"--until", w.Sim.Start().Format(time.RFC3339), "--dir", b.TempDir(), "--progress", "log", "--http-addr", addr)
	profiled := saveProfiles(b, addr)
	memory := sampleMemory(b, c.cmd.Process.Pid, addr)
	if err := <-c.wait(90 * time.Minute); err != nil {
		b.Fatalf("backfill: %v\n%s", err, c.stderr.String())
	}
	elapsed, testCPU := time.Since(start), cpumeter.Process()-testCPU
	profiled()
	mem := memory()
	mem.log(b)
	redisSpent := redisCPU(b, rdb) - redisBefore
	ru := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
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
	b.ReportMetric(float64(done.Requests), "api-requests")
	b.ReportMetric(float64(2*((n+999)/1000)), "paged-requests")
	b.Logf("where the backfill's time went:\n%s", strings.Join(stagesLine.FindAllString(c.stderr.String(), -1), "\n"))
	return procRun{events: float64(streamMsgs(b, js)), elapsed: elapsed, poller: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		redis: redisSpent, test: testCPU, peakMB: mem.peakMB,
		what: fmt.Sprintf("%d calls, %d records, %d export jobs, %d API requests (paged lists: at least %d)",
			n, done.Records, done.Jobs, done.Requests, 2*((n+999)/1000))}
}

// backlogRates runs the live path over a backlog of n ended calls, as
// BenchmarkBacklog does (without JetStream's own rate), and measures it.
func backlogRates(b *testing.B, n int) procRun {
	bd := startBed(b, redistest.Start, 0, sim.Config{Seed: 3, Agents: 40, CallRate: 60, Backlog: n})
	want := uint64(bd.world.Sim.Stats().MetricsFinalized)
	js, rdb := bd.stream(b), bd.redis.Client(b)
	addr := simtest.FreeAddr(b)
	// The backfill's lease (see backfillOnce): the live poller retries a cycle
	// whose commit failed, which would cost the backlog CPU the backfill does
	// not spend.
	env := append(bd.env("bench", addr), "CALLBUS_CALLS_BACKFILL_HOURS=72", "CALLBUS_LOG_LEVEL=warn", "CALLBUS_LEASE_TTL_SECONDS=15")
	pollerBinary(b)
	redisBefore := redisCPU(b, rdb)
	start, testCPU := time.Now(), cpumeter.Process()
	c := startPoller(b, env)
	memory := sampleMemory(b, c.cmd.Process.Pid, addr)
	for subjectCount(b, js, "callcenter.acme.metric.finalized") < want {
		if time.Since(start) > 20*time.Minute {
			b.Fatalf("backlog not caught up after 20 minutes\n%s", c.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed, testCPU := time.Since(start), cpumeter.Process()-testCPU
	if err := c.terminate(60 * time.Second); err != nil {
		b.Fatalf("poller: %v", err)
	}
	mem := memory()
	ru := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return procRun{events: float64(streamMsgs(b, js)), elapsed: elapsed, poller: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		redis: redisCPU(b, rdb) - redisBefore, test: testCPU, peakMB: mem.peakMB, what: fmt.Sprintf("%d calls", n)}
}
