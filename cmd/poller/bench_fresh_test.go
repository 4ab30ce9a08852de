package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// Freshness at plan 100 (make bench; README "Freshness"): callbus at its default
// share (80%), target intervals and floor (2 s), with another integration of the
// account taking otherPerMinute requests a minute (Sim.OtherClient), for
// CALLBUS_BENCH_FRESH (2m) of real time after a warm-up of freshWarmup,
// simulator at speed 1, without and with the drift/fault profile (driftFaults).
// It reports per resource the requests per cycle, the interval achieved (cycles
// over the measured period) next to the effective one the allocator set, and per
// event type the detection delay p50/p99 next to the budget-bound revisit
// interval of its resource: the interval Allocate gives that resource when the
// whole spendable budget (the share less the other client) is shared by the
// requests per cycle every resource was measured to need, targets first, then
// floors, in priority order. CALLBUS_BENCH_FRESH_LOG=1 prints the poller's
// warnings; =debug also writes its debug log to a file and prints the slowest
// event of each type (debugReport).
const (
	otherPerMinute = 30
	freshWarmup    = time.Minute
)

// driftFaults is the simulator's drift/fault profile of the benchmark: every
// field-note variant (a missing meta among them) on a record or list in five,
// offsets on one in five, 2% of requests failing with 5xx, 1% of bodies cut,
// and 20-70 ms of latency.
func driftFaults(c *sim.Config) {
	c.Drift, c.OffsetRate, c.ErrorRate, c.MalformedRate = 0.2, 0.2, 0.02, 0.01
	c.Latency, c.LatencyJitter = 20*time.Millisecond, 50*time.Millisecond
}

// eventResource is the resource whose reads find each event type.
var eventResource = map[events.Type]string{
	events.CallCreated: poll.ResCalls, events.ParticipantStatusChanged: poll.ResCalls, events.CallEnded: poll.ResCalls,
	events.MetricFinalized: poll.ResMetrics, events.UserStatusChanged: poll.ResUsers,
}

func BenchmarkLiveFreshness(b *testing.B) {
	live := envDuration("CALLBUS_BENCH_FRESH", 2*time.Minute)
	for _, prof := range []struct {
		name  string
		tweak func(*sim.Config)
	}{{"clean", nil}, {"drift", driftFaults}} {
		b.Run(prof.name, func(b *testing.B) {
			for range b.N {
				freshnessOnce(b, live, prof.tweak)
			}
		})
	}
}

func freshnessOnce(b *testing.B, live time.Duration, tweak func(*sim.Config)) {
	cfg := sim.Config{Seed: 5, Agents: 20, CallRate: 6, Plan: 100, Clock: sim.NewScaledClock(time.Now(), 1)}
	if tweak != nil {
		tweak(&cfg)
	}
	bd := startBed(b, redistest.Start, 0, cfg)
	w := bd.world
	defer w.Sim.OtherClient(otherPerMinute)()
	addr := simtest.FreeAddr(b)
	env := configDefaults(bd.env("bench-fresh", addr))
	if os.Getenv("CALLBUS_BENCH_FRESH_LOG") == "debug" {
		env = append(env, "CALLBUS_LOG_LEVEL=debug") // the last value of a variable wins
	}
	c := startPoller(b, env)
	time.Sleep(freshWarmup) // warm-up: the first reads, the limit and the other client learned
	begin, from := scrapePoll(b, addr), time.Now()
	time.Sleep(live) // the measured period: live traffic, not a wait for a condition
	end, period := scrapePoll(b, addr), time.Since(from)
	if err := c.terminate(60 * time.Second); err != nil {
		b.Fatalf("poller: %v", err)
	}
	if os.Getenv("CALLBUS_BENCH_FRESH_LOG") != "" {
		for _, l := range strings.Split(c.stderr.String(), "\n") {
			if strings.Contains(l, `"level":"warn"`) || strings.Contains(l, `"level":"error"`) {
				fmt.Println(l)
			}
		}
	}
	truth := w.ReadTruth(b)
	msgs := slices.DeleteFunc(readStream(b, bd.stream(b)), func(m audit.Message) bool { return m.Published.Before(from) || m.Published.After(from.Add(period)) })
	if os.Getenv("CALLBUS_BENCH_FRESH_LOG") == "debug" {
		debugReport(b, c.stderr.String(), msgs, truth)
	}
	bound := reportCycles(b, begin, end, period)
	reportDelays(b, audit.Delays(msgs, truth, func(t time.Time) time.Time { return t }), bound)
}

// pollSample is what the poller's /metrics said of its cycles at one time.
type pollSample struct {
	cycles, requests, interval map[string]float64 // by resource
	throttled                  float64            // API responses 429
}

var promLine = regexp.MustCompile(`(?m)^(callbus_poll_cycle_duration_seconds_count|callbus_poll_requests_total|callbus_poll_interval_seconds|callbus_api_requests_total)\{([^}]*)\} (\S+)$`)

func scrapePoll(b *testing.B, addr string) pollSample {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		b.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatalf("metrics: %v", err)
	}
	s := pollSample{cycles: map[string]float64{}, requests: map[string]float64{}, interval: map[string]float64{}}
	label := func(labels, name string) string {
		m := regexp.MustCompile(name + `="([^"]*)"`).FindStringSubmatch(labels)
		if m == nil {
			return ""
		}
		return m[1]
	}
	for _, m := range promLine.FindAllStringSubmatch(string(body), -1) {
		v, _ := strconv.ParseFloat(m[3], 64)
		res := label(m[2], "resource")
		switch m[1] {
		case "callbus_poll_cycle_duration_seconds_count":
			s.cycles[res] += v
		case "callbus_poll_requests_total":
			s.requests[res] += v
		case "callbus_poll_interval_seconds":
			s.interval[res] = v
		case "callbus_api_requests_total":
			if label(m[2], "status") == "429" {
				s.throttled += v
			}
		}
	}
	return s
}

// defaultTargets are the configuration's default target intervals (config/iparams.json).
var defaultTargets = map[string]time.Duration{
	poll.ResCalls: 5 * time.Second, poll.ResMetrics: 30 * time.Second, poll.ResUsers: 30 * time.Second,
	poll.ResTeams: 300 * time.Second, poll.ResUserStatuses: 600 * time.Second,
}

// reportCycles logs the cycles of the measured period per resource and returns
// the budget-bound revisit interval of each.
func reportCycles(b *testing.B, begin, end pollSample, period time.Duration) map[string]time.Duration {
	prio := map[string]int{poll.ResCalls: 100, poll.ResUsers: 80, poll.ResMetrics: 60, poll.ResTeams: 20, poll.ResUserStatuses: 10}
	var ds []poll.Demand
	var lines []string
	total := 0.0
	for res, target := range defaultTargets {
		cycles, reqs := end.cycles[res]-begin.cycles[res], end.requests[res]-begin.requests[res]
		perCycle := 1.0
		if cycles > 0 {
			perCycle = reqs / cycles
		}
		total += reqs
		ds = append(ds, poll.Demand{Name: res, Target: target, Priority: prio[res], Cost: perCycle, Floor: 2 * time.Second})
		achieved := "-"
		if cycles > 0 {
			achieved = fmt.Sprintf("%.2f s", period.Seconds()/cycles)
		}
		lines = append(lines, fmt.Sprintf("| %s | %.0f | %.2f | %s | %.2f s | %s |", res, cycles, perCycle, achieved, end.interval[res], target))
		if res == poll.ResCalls && cycles > 0 {
			b.ReportMetric(period.Seconds()/cycles, "calls-interval-s")
			b.ReportMetric(end.interval[res], "calls-effective-s")
			b.ReportMetric(period.Seconds()/cycles/end.interval[res], "calls-achieved/effective")
		}
	}
	slices.Sort(lines)
	spendable := float64(80 - otherPerMinute) // the share of plan 100 less the other client
	bound := poll.Allocate(spendable, time.Minute, ds)
	perMin := total / period.Minutes()
	b.ReportMetric(perMin, "requests/min")
	b.ReportMetric(end.throttled-begin.throttled, "429s")
	// Printed, not logged: go test keeps ten lines of a benchmark's log.
	fmt.Printf("%s: cycles over %s (plan 100, share 80%%, another client %d/min; callbus %.1f requests/min, %.0f 429s):\n\n"+
		"| resource | cycles | requests/cycle | interval achieved | effective (allocator) | target |\n|---|---|---|---|---|---|\n%s",
		b.Name(), period.Round(time.Second), otherPerMinute, perMin, end.throttled-begin.throttled, strings.Join(lines, "\n")+"\n\n")
	return bound
}

// reportDelays logs the detection delay per event type next to the
// budget-bound revisit interval of its resource.
func reportDelays(b *testing.B, delays map[events.Type][]time.Duration, bound map[string]time.Duration) {
	var lines []string
	for typ, res := range eventResource {
		ds := delays[typ]
		if len(ds) == 0 {
			continue
		}
		p50, p99, bd := audit.Percentile(ds, 50), audit.Percentile(ds, 99), bound[res]
		b.ReportMetric(p99.Seconds()/bd.Seconds(), string(typ)+"-p99/bound")
		lines = append(lines, fmt.Sprintf("| `%s` | %s | %d | %.1f s | %.1f s | %.1f s | %.2f |", typ, res, len(ds), p50.Seconds(), p99.Seconds(), bd.Seconds(), p99.Seconds()/bd.Seconds()))
	}
	slices.Sort(lines)
	fmt.Printf("%s: detection delay:\n\n| event | resource | n | p50 | p99 | budget-bound interval | p99 ÷ bound |\n|---|---|---|---|---|---|---|\n%s\n\n", b.Name(), strings.Join(lines, "\n"))
}

// debugReport (CALLBUS_BENCH_FRESH_LOG=debug) writes the poller's debug log (a
// line per request and per poll cycle) to a file and prints the slowest event
// of each type with the time it was published, to find its cycle in the log.
func debugReport(b *testing.B, log string, msgs []audit.Message, truth *audit.Truth) {
	name := filepath.Join(os.TempDir(), "callbus-fresh-"+strings.ReplaceAll(b.Name(), "/", "-")+".log")
	if err := os.WriteFile(name, []byte(log), 0o644); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s: the poller's debug log: %s\n", b.Name(), name)
	type slow struct {
		d  time.Duration
		at time.Time
	}
	worst := map[events.Type]slow{}
	for _, m := range msgs {
		for typ, ds := range audit.Delays([]audit.Message{m}, truth, func(t time.Time) time.Time { return t }) {
			if len(ds) > 0 && ds[0] > worst[typ].d {
				worst[typ] = slow{ds[0], m.Published}
			}
		}
	}
	for typ, w := range worst {
		fmt.Printf("%s: slowest %s: %.1f s, published %s\n", b.Name(), typ, w.d.Seconds(), w.at.Format("15:04:05.000"))
	}
}
