package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// fleetBenchIntervals is, per event type, the default interval of the read that
// detects it (config defaults: calls 5 s, open calls 10 s, metrics and users
// 30 s): the bound of issue 14 is p99 ≤ 1.2 × this.
var fleetBenchIntervals = map[events.Type]time.Duration{
	events.CallCreated:              5 * time.Second,
	events.ParticipantStatusChanged: 10 * time.Second,
	events.CallEnded:                10 * time.Second,
	events.MetricFinalized:          30 * time.Second,
	events.UserStatusChanged:        30 * time.Second,
}

// BenchmarkFleetAccounts: one poller process in fleet mode serving the
// accounts of fleetMix (2,000 by default: 10% busy at 6 calls a minute, 90%
// quiet at one call per 10 minutes, 20 users each), each at plan 100 (its own
// 100 requests a minute) with callbus's default share and intervals. The
// accounts are served by callcenter-sim processes of their own (startSims), at
// real speed, so that the poller's CPU and the simulators' are read apart, each
// from its process's /proc entry. After every account is led and a warm-up, it
// measures for CALLBUS_BENCH_LIVE (3m): the poller's CPU-seconds per
// account-minute, its mean RSS per account (and its Go heap, stacks and
// goroutines at the window's end), and each event type's detection delay p99
// over all accounts against its interval (goal ≤ 1.2); it derives the accounts
// one core sustains from the CPU figure. CALLBUS_BENCH_HEAPPROFILE=<file> saves
// the poller's heap profile at the window's end, CALLBUS_BENCH_CPUPROFILE the
// first CALLBUS_BENCH_PROFILE of the window; CALLBUS_BENCH_POLLER_GOMEMLIMIT
// runs the poller with that GOMEMLIMIT (the chart sets 90% of its limit).
func BenchmarkFleetAccounts(b *testing.B) {
	m := fleetMixFromEnv()
	for range b.N {
		fleetAccountsOnce(b, m)
	}
}

func fleetAccountsOnce(b *testing.B, m fleetMix) {
	bd := startEngines(b, redistest.Start)
	sims := startSims(b, m)
	dir := b.TempDir()
	var names []string
	for _, g := range sims {
		for _, name := range g.names {
			writeAccount(b, dir, name, g.baseURL(name), simKey+"-"+name)
			if m.floor > 0 {
				setFloor(b, dir, name, m.floor)
			}
		}
		names = append(names, g.names...)
	}
	addr := simtest.FreeAddr(b)
	env := configDefaults(bd.fleetEnv("bench-fleet", addr, dir), "CALLBUS_LEASE_TTL_SECONDS")
	env = append(env, "CALLBUS_LOG_LEVEL=warn", "CALLBUS_DEBUG_PPROF=true") // pprof: the heap and goroutine figures
	if v := os.Getenv("CALLBUS_BENCH_POLLER_GOMEMLIMIT"); v != "" {
		env = append(env, "GOMEMLIMIT="+v)
	}
	if v := os.Getenv("CALLBUS_BENCH_POLLER_GODEBUG"); v != "" { // memprofilerate=4096: a finer heap profile
		env = append(env, "GODEBUG="+v)
	}
	c := startPoller(b, env)
	pid := c.cmd.Process.Pid
	waitAllLed(b, bd.redis, names, c)
	time.Sleep(m.warmup) // first reads out of the way, not a condition
	rdb := bd.redis.Client(b)
	from := time.Now()
	cpu0, test0, redis0 := procCPU(b, pid), procCPU(b, os.Getpid()), redisCPU(b, rdb)
	sim0 := make([]float64, len(sims))
	for i, g := range sims {
		sim0[i] = g.cpu(b)
	}
	profiles := saveProfiles(b, addr)
	rss := sampleRSS(pid, m.live)
	run := fleetRun{mix: m, cpu: procCPU(b, pid) - cpu0, testCPU: procCPU(b, os.Getpid()) - test0, redisCPU: redisCPU(b, rdb) - redis0, rss: rss}
	for i, g := range sims {
		run.simCPU += g.cpu(b) - sim0[i]
	}
	run.runtime = pollerRuntime(b, addr)
	profiles()
	if err := c.terminate(2 * time.Minute); err != nil {
		b.Fatalf("poller: %v\n%s", err, tail(c.stderr.String(), 3000))
	}
	truth := map[string]*audit.Truth{}
	for _, g := range sims {
		maps.Copy(truth, g.stop(b))
	}
	msgs := readStreamAfterDrains(b, bd.stream(b))
	run.msgs = len(msgs)
	run.delays = map[events.Type][]time.Duration{}
	for name, ms := range byAccount(msgs) {
		var window []audit.Message
		for _, m := range ms {
			if m.Published.After(from) {
				window = append(window, m)
			}
		}
		t := truth[name]
		if t == nil {
			b.Fatalf("account %s published events but its simulator has no truth log", name)
		}
		for typ, ds := range audit.Delays(window, t, func(t time.Time) time.Time { return t }) {
			run.delays[typ] = append(run.delays[typ], ds...)
		}
	}
	reportFleet(b, run)
	if log := c.stderr.String(); log != "" { // warnings and errors only (CALLBUS_LOG_LEVEL=warn)
		b.Logf("the poller logged %d lines at warn or above:\n%s", strings.Count(log, "\n"), logSummary(log))
	}
}

// setFloor adds poll_interval_floor_seconds to the account file of name (by
// default the intervals shrink toward 2 s while the budget has room, which
// spends every account's budget; a floor at the targets keeps them).
func setFloor(b *testing.B, dir, name string, floor int) {
	file := dir + "/" + name + ".json"
	raw, err := os.ReadFile(file)
	var v map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err == nil {
		v["poll_interval_floor_seconds"] = floor
		raw, err = json.Marshal(v)
	}
	if err == nil {
		err = os.WriteFile(file, raw, 0o600)
	}
	if err != nil {
		b.Fatalf("account %s: floor: %v", name, err)
	}
}

// logSummary counts the poller's JSON log lines by message, most frequent
// first, with one error of each.
func logSummary(log string) string {
	type seen struct {
		n   int
		err string
	}
	by := map[string]*seen{}
	for _, line := range strings.Split(log, "\n") {
		var l struct{ Message, Error string }
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		if by[l.Message] == nil {
			by[l.Message] = &seen{err: l.Error}
		}
		by[l.Message].n++
	}
	msgs := slices.SortedFunc(maps.Keys(by), func(a, b string) int { return by[b].n - by[a].n })
	var sb strings.Builder
	for _, m := range msgs[:min(len(msgs), 8)] {
		fmt.Fprintf(&sb, "%6d × %s (%s)\n", by[m].n, m, tail(by[m].err, 200))
	}
	return sb.String()
}

// readStreamAfterDrains reads the stream once the server has room for the
// audit's consumer: the poller's shutdown read the stream for each account it
// drained, and nats-server keeps each such consumer for a few seconds (up to
// 1,000 per stream by default).
func readStreamAfterDrains(b *testing.B, js jetstream.JetStream) []audit.Message {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		msgs, err := audit.ReadStream(b.Context(), js, "CALLCENTER")
		if err == nil {
			return msgs
		}
		if !errors.Is(err, jetstream.ErrMaximumConsumersLimit) && !strings.Contains(err.Error(), "maximum consumers") || time.Now().After(deadline) {
			b.Fatal(err)
		}
	}
}

// fleetRun is what one BenchmarkFleetAccounts run measured.
type fleetRun struct {
	mix      fleetMix
	cpu      float64 // poller CPU-seconds in the window
	simCPU   float64 // the simulator processes' CPU-seconds meanwhile
	testCPU  float64 // the benchmark's own (the NATS server) CPU-seconds meanwhile
	redisCPU float64 // redis-server's CPU-seconds meanwhile
	rss      rssStats
	runtime  goRuntime
	delays   map[events.Type][]time.Duration
	msgs     int
}

func reportFleet(b *testing.B, r fleetRun) {
	n := float64(r.mix.accounts)
	acctMin := n * r.mix.live.Minutes()
	cpuPer := r.cpu / acctMin
	perCore := 60 / cpuPer // account-minutes one core serves per minute
	b.ReportMetric(cpuPer, "cpu-s/account-min")
	b.ReportMetric(r.rss.mean/n, "RSS-MB/account")
	b.ReportMetric(r.rss.peak, "peak-RSS-MB")
	b.ReportMetric(perCore, "accounts/core")
	lines := []string{"| event | n | p99 | interval | p99 ÷ interval | ≤ 1.2 |", "|---|---|---|---|---|---|"}
	for _, typ := range []events.Type{events.CallCreated, events.ParticipantStatusChanged, events.CallEnded, events.MetricFinalized, events.UserStatusChanged} {
		ds := r.delays[typ]
		if len(ds) == 0 {
			lines = append(lines, fmt.Sprintf("| `%s` | 0 | | | | |", typ))
			continue
		}
		p99 := audit.Percentile(ds, 99)
		ratio := p99.Seconds() / fleetBenchIntervals[typ].Seconds()
		b.ReportMetric(ratio, string(typ)+"-p99/interval")
		lines = append(lines, fmt.Sprintf("| `%s` | %d | %.1f s | %s | %.2f | %s |", typ, len(ds), p99.Seconds(), fleetBenchIntervals[typ], ratio, yesNo(ratio <= 1.2)))
	}
	rt := r.runtime
	b.Logf("%s for %s (%d messages in all): poller CPU %.1f s = %.4f CPU-s per account-minute (%.2f cores) → %.0f accounts per core at 100%%; "+
		"RSS mean %.1f MB (%.3f MB per account), peak %.1f MB; at the end: Go heap in use %.1f MB, stacks %.1f MB, %d goroutines (%.1f per account), runtime total %.1f MB; "+
		"meanwhile the simulator processes %.1f CPU-s, redis-server %.1f, the benchmark (the NATS server) %.1f; load average %s\n%s",
		r.mix, r.mix.live, r.msgs, r.cpu, cpuPer, r.cpu/r.mix.live.Seconds(), perCore,
		r.rss.mean, r.rss.mean/n, r.rss.peak, rt.heapInuse, rt.stackInuse, rt.goroutines, float64(rt.goroutines)/n, rt.sys,
		r.simCPU, r.redisCPU, r.testCPU, loadAvg(), strings.Join(lines, "\n"))
}

// loadAvg is the machine's 1, 5 and 15 minute load averages (/proc/loadavg).
func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// waitAllLed waits (up to 3 minutes) until every account has a lease holder.
func waitAllLed(b *testing.B, rs *redistest.Server, names []string, c *child) {
	rdb := rs.Client(b)
	stores := make([]*cursor.Store, len(names))
	for i, name := range names {
		s, err := cursor.New(rdb, name)
		if err != nil {
			b.Fatal(err)
		}
		stores[i] = s
	}
	deadline := time.Now().Add(3 * time.Minute)
	for i := 0; i < len(stores); {
		if h, _, _, err := stores[i].Leader(b.Context()); err == nil && h != "" {
			i++
			continue
		}
		if time.Now().After(deadline) {
			b.Fatalf("account %s not led after 3 minutes\n%s", names[i], tail(c.stderr.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}

// procCPU is the CPU-seconds (user + system) process pid has used so far, from
// /proc/<pid>/stat (clock ticks of 1/100 s, Linux's USER_HZ).
func procCPU(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read /proc stat: %v", err)
	}
	// Fields after the command name (in parentheses, which may hold spaces):
	// utime and stime are the 14th and 15th of the line.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// rssStats are the resident set sizes seen, in MB.
type rssStats struct{ mean, peak float64 }

// sampleRSS reads process pid's VmRSS every second for d.
func sampleRSS(pid int, d time.Duration) rssStats {
	var sum, peak float64
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Second) {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				sum += kb / 1024
				peak = max(peak, kb/1024)
				n++
			}
		}
	}
	if n == 0 {
		return rssStats{}
	}
	return rssStats{mean: sum / float64(n), peak: peak}
}

// goRuntime is where the poller's memory is, from its /debug/pprof, in MB.
type goRuntime struct {
	heapInuse, stackInuse, sys float64 // MemStats HeapInuse, StackInuse, Sys
	goroutines                 int
}

// pollerRuntime reads the poller's heap figures and goroutine count (pprof at
// addr), and saves its heap profile to CALLBUS_BENCH_HEAPPROFILE when set (for
// go tool pprof -sample_index=inuse_space), its goroutines beside it
// (<file>.goroutines.txt).
func pollerRuntime(b *testing.B, addr string) goRuntime {
	var rt goRuntime
	get := func(path string) string {
		body, err := httpGet(b.Context(), "http://"+addr+path)
		if err != nil {
			b.Logf("poller %s: %v", path, err)
		}
		return body
	}
	for _, line := range strings.Split(get("/debug/pprof/heap?debug=1"), "\n") {
		var name string
		var v float64
		if n, _ := fmt.Sscanf(line, "# %s = %g", &name, &v); n == 2 {
			switch name {
			case "HeapInuse":
				rt.heapInuse = v / (1 << 20)
			case "Stack": // "# Stack = inuse / sys"
				rt.stackInuse = v / (1 << 20)
			case "Sys":
				rt.sys = v / (1 << 20)
			}
		}
	}
	goroutines := get("/debug/pprof/goroutine?debug=1")
	first, _, _ := strings.Cut(goroutines, "\n")
	_, _ = fmt.Sscanf(first, "goroutine profile: total %d", &rt.goroutines)
	if file := os.Getenv("CALLBUS_BENCH_HEAPPROFILE"); file != "" {
		if err := os.WriteFile(file+".goroutines.txt", []byte(goroutines), 0o644); err != nil {
			b.Errorf("goroutines: %v", err)
		}
		if err := fetchProfile(b.Context(), "http://"+addr+"/debug/pprof/heap", file); err != nil {
			b.Errorf("heap profile: %v", err)
		}
	}
	return rt
}

// httpGet is the body of a GET of url.
func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), err
}
