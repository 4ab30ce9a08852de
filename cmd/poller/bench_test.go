package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// Benchmarks of the poller binary end to end (make bench). Each iteration is a
// whole run: use -benchtime 1x.

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// subjectCount is the number of messages on one subject of the stream.
func subjectCount(b testing.TB, js jetstream.JetStream, subject string) uint64 {
	s, err := js.Stream(b.Context(), "CALLCENTER")
	if err != nil {
		return 0
	}
	info, err := s.Info(b.Context(), jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0
	}
	return info.State.Subjects[subject]
}

// BenchmarkBacklog: a simulator holding CALLBUS_BENCH_BACKLOG (100,000) ended
// calls, no rate limit; the poller starts with no state and runs until every call,
// its end and its final metric are in the stream. Reports events per second end to
// end, the poller's CPU seconds and peak memory (RSS) per 10,000 events, Redis
// bytes per tracked call and Redis CPU seconds per 10,000 events (the commit and
// outbox scripts run there), and the bus's own limit right before and after the run
// (rawPublishRate) with the ratio end-to-end ÷ raw.
//
// CALLBUS_BENCH_CPUPROFILE and CALLBUS_BENCH_TRACE save profiles of the poller
// (see saveProfiles), CALLBUS_BENCH_HEAPPROFILE its heap at its peak and a
// timeline of its memory (see sampleMemory); CALLBUS_BENCH_POLLER_GOMEMLIMIT
// runs the poller with that GOMEMLIMIT.
func BenchmarkBacklog(b *testing.B) {
	n := envInt("CALLBUS_BENCH_BACKLOG", 100000)
	for range b.N {
		backlogOnce(b, n)
	}
}

func backlogOnce(b *testing.B, n int) {
	// One call a second: 100,000 calls span about 28 hours before the start.
	bd := startBed(b, redistest.Start, 0, sim.Config{Seed: 3, Agents: 40, CallRate: 60, Backlog: n})
	want := uint64(bd.world.Sim.Stats().MetricsFinalized)
	nc := bd.nats.Conn(b)
	js := jetStream(b, nc)
	rdb := bd.redis.Client(b)
	var raw rawRates
	raw.sizeBefore = envInt("CALLBUS_BENCH_EVENT_SIZE", defaultEventSize)
	raw.before, raw.cpuBefore = rawPublishRate(b, nc, raw.sizeBefore)
	addr := simtest.FreeAddr(b)
	env := append(bd.env("bench", addr), "CALLBUS_CALLS_BACKFILL_HOURS=72", "CALLBUS_LOG_LEVEL=warn")
	env = append(env, profileEnv()...)
	if limit := os.Getenv("CALLBUS_BENCH_POLLER_GOMEMLIMIT"); limit != "" {
		// The poller's alone, as the Helm chart sets it from the container's
		// limit: a GOMEMLIMIT of the test's own would squeeze the simulator.
		env = append(env, "GOMEMLIMIT="+limit)
	}
	if err := rdb.ConfigResetStat(b.Context()).Err(); err != nil {
		b.Fatal(err)
	}
	redisBefore := redisCPU(b, rdb)
	start, testCPU := time.Now(), cpumeter.Process()
	c := startPoller(b, env)
	profiled := saveProfiles(b, addr)
	memory := sampleMemory(b, c.cmd.Process.Pid, addr)
	for subjectCount(b, js, "callcenter.acme.metric.finalized") < want {
		if time.Since(start) > 20*time.Minute {
			b.Fatalf("not caught up after 20 minutes: %d of %d metrics finalized\n%s", subjectCount(b, js, "callcenter.acme.metric.finalized"), want, c.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed, testCPU := time.Since(start), cpumeter.Process()-testCPU
	profiled()
	if err := c.terminate(60 * time.Second); err != nil {
		b.Fatalf("poller: %v", err)
	}
	mem := memory() // the shutdown included
	mem.log(b)
	redisSpent := redisCPU(b, rdb) - redisBefore
	raw.sizeAfter = medianBodySize(b, js, "CALLCENTER")
	raw.after, raw.cpuAfter = rawPublishRate(b, nc, raw.sizeAfter)
	redisTimes := redisReport(b, rdb, bd.store, float64(streamMsgs(b, js)))
	defer b.Log(redisTimes) // last: go test shows only a benchmark's first lines
	reportBacklog(b, c, js, bd.store, backlogRun{n: n, elapsed: elapsed, redisCPU: redisSpent, testCPU: testCPU, raw: raw, peakMB: mem.peakMB})
}

// backlogRun is what BenchmarkBacklog measured during its run.
type backlogRun struct {
	n        int           // calls of backlog
	elapsed  time.Duration // from the poller's start to the last final metric in the stream
	redisCPU float64       // CPU seconds Redis spent meanwhile
	testCPU  time.Duration // CPU the test process spent meanwhile: the NATS server, the simulator, the wait
	raw      rawRates
	peakMB   float64 // the poller's peak resident set (sampleMemory)
}

// reportBacklog measures what the run left behind and reports it with run.
func reportBacklog(b *testing.B, c *child, js jetstream.JetStream, store *cursor.Store, run backlogRun) {
	n, elapsed := run.n, run.elapsed
	ru := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	peakMB := run.peakMB // not ru.Maxrss: see sampleMemory
	events := float64(streamMsgs(b, js))
	total, _, err := store.MemoryUsage(b.Context()) // every key of the account
	if err != nil {
		b.Fatal(err)
	}
	calls, err := store.SnapshotCount(b.Context(), "call")
	if err != nil || calls == 0 {
		b.Fatalf("no call snapshots left to measure (%v)", err)
	}
	perCall := float64(total) / float64(calls)
	b.ReportMetric(events/elapsed.Seconds(), "events/s")
	b.ReportMetric(cpu.Seconds()/events*1e4, "cpu-s/10k-events")
	b.ReportMetric(peakMB, "peak-RSS-MB")
	b.ReportMetric(peakMB/events*1e4, "peak-RSS-MB/10k-events")
	b.ReportMetric(perCall, "redis-B/tracked-call")
	b.ReportMetric(run.redisCPU/events*1e4, "redis-cpu-s/10k-events")
	b.Logf("%d calls, %.0f events in %s; poller CPU %s, Redis CPU %.1fs, peak RSS %.1f MB; %d calls tracked in Redis at the end, %.0f B each",
		n, events, elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond), run.redisCPU, peakMB, calls, perCall)
	b.Log(run.raw.report(b, events/elapsed.Seconds()))
	// Where the two cores went, per event: what the ratio is made of.
	pollerUS, redisUS := micros(cpu)/events, run.redisCPU*1e6/events
	jetstreamUS := (micros(run.raw.cpuBefore) + micros(run.raw.cpuAfter)) / 2
	b.Logf("CPU per event: poller %.1f µs, Redis %.1f µs, test process (NATS server, simulator, this wait) %.1f µs; in all %.1f µs, against %.1f µs per message of JetStream alone",
		pollerUS, redisUS, micros(run.testCPU)/events, pollerUS+redisUS+micros(run.testCPU)/events, jetstreamUS)
	// Issue 30's yardstick: callbus's own CPU per event against the bus's per
	// message, both measured in this run (a ratio on any machine).
	b.ReportMetric((pollerUS+redisUS)/jetstreamUS, "callbus/jetstream-cpu")
	b.Logf("(poller + Redis) ÷ JetStream CPU per event = (%.1f + %.1f) ÷ %.1f = %.2f", pollerUS, redisUS, jetstreamUS, (pollerUS+redisUS)/jetstreamUS)
	b.Logf("the exited poller's ru_maxrss: %.1f MB (includes the test process's resident set when it was forked: see sampleMemory)", float64(ru.Maxrss)/1024)
}

// BenchmarkLiveDelay: live traffic at plan 100 (100 requests a minute for the
// whole account, callbus using its default 80% share and default intervals) for
// CALLBUS_BENCH_LIVE (3m) of real time, simulator at speed 1. Reports the
// detection delay (the time the stream stored an event minus the time the change
// happened in the simulated world) per event type, p50 and p99.
func BenchmarkLiveDelay(b *testing.B) {
	live := envDuration("CALLBUS_BENCH_LIVE", 3*time.Minute)
	for range b.N {
		bd := startBed(b, redistest.Start, 0, sim.Config{Seed: 5, Agents: 20, CallRate: 6, Plan: 100, Clock: sim.NewScaledClock(time.Now(), 1)})
		c := startPoller(b, configDefaults(bd.env("bench-live", simtest.FreeAddr(b))))
		time.Sleep(live) // the measured period: live traffic, not a wait for a condition
		if err := c.terminate(60 * time.Second); err != nil {
			b.Fatalf("poller: %v", err)
		}
		truth := bd.world.ReadTruth(b)
		msgs := readStream(b, bd.stream(b))
		delays := audit.Delays(msgs, truth, func(t time.Time) time.Time { return t })
		var lines []string
		for _, typ := range []events.Type{events.CallCreated, events.ParticipantStatusChanged, events.CallEnded, events.MetricFinalized, events.UserStatusChanged} {
			ds := delays[typ]
			if len(ds) == 0 {
				continue
			}
			p50, p99 := audit.Percentile(ds, 50), audit.Percentile(ds, 99)
			b.ReportMetric(p50.Seconds(), string(typ)+"-p50-s")
			b.ReportMetric(p99.Seconds(), string(typ)+"-p99-s")
			lines = append(lines, fmt.Sprintf("| `%s` | %d | %.1f s | %.1f s |", typ, len(ds), p50.Seconds(), p99.Seconds()))
		}
		slices.Sort(lines)
		b.Logf("detection delay over %s at plan 100 (%d messages):\n| event | n | p50 | p99 |\n|---|---|---|---|\n%s", live, len(msgs), strings.Join(lines, "\n"))
	}
}
