package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/fleet"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// staticAccounts is an AccountSource of fixed settings.
type staticAccounts struct {
	mu sync.Mutex
	s  map[string]config.Settings
}

func (a *staticAccounts) Accounts() []fleet.Account {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []fleet.Account
	for name := range a.s {
		out = append(out, fleet.Account{Name: name, Digest: name})
	}
	return out
}

func (a *staticAccounts) Settings(name string) (config.Settings, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.s[name]
	return s, ok
}

// accountCycles keeps, per account (named by the cycle's context), the
// successful calls cycles and the longest wait between two of them after the
// first.
type accountCycles struct {
	mu      sync.Mutex
	ok      map[string]int
	failed  map[string]int
	last    map[string]time.Time
	longest map[string]time.Duration
}

func (c *accountCycles) hook(ctx context.Context, res string, _ time.Duration, _ int, err error) {
	if res != poll.ResCalls {
		return
	}
	acct, now := telemetry.AccountOf(ctx), time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failed[acct]++
		return
	}
	if last, ok := c.last[acct]; ok {
		c.longest[acct] = max(c.longest[acct], now.Sub(last))
	}
	c.ok[acct]++
	c.last[acct] = now
}

func (c *accountCycles) get(acct string) (ok, failed int, longest time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok[acct], c.failed[acct], c.longest[acct]
}

// One process serves four accounts of a fleet, each against a simulated world
// of its own: one whose key the API refuses (401), one whose API answers every
// request after seconds. The two healthy accounts keep polling at their
// interval — never waiting as long as one slow answer — and their events reach
// the stream; /status lists the four with this replica leading each, /metrics
// labels each account's series.
func TestFleetIsolatesAccounts(t *testing.T) {
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	const slowLatency = 4 * time.Second
	accounts := []struct {
		name  string
		tweak func(*sim.Config)
		key   string
	}{
		{name: "acme"},
		{name: "globex"},
		{name: "denied", key: "not-the-key"},
		{name: "sluggish", tweak: func(c *sim.Config) { c.Latency = slowLatency }},
	}
	src := &staticAccounts{s: map[string]config.Settings{}}
	for _, a := range accounts {
		w := newWorld(t, a.tweak)
		w.Run(t, 20)
		s := testSettings(w, ns.URL(), rs.URL, "fleet-1")
		s.Account = a.name
		s.CallsInterval, s.OpenCallsInterval = 100*time.Millisecond, 100*time.Millisecond
		if a.key != "" {
			s.APIKey = secret.New(a.key)
		}
		src.s[a.name] = s
	}
	proc := testSettings(&simtest.World{URL: "http://127.0.0.1:1"}, ns.URL(), rs.URL, "fleet-1")
	proc.Account, proc.HTTPAddr = "", simtest.FreeAddr(t)
	cyc := &accountCycles{ok: map[string]int{}, failed: map[string]int{}, last: map[string]time.Time{}, longest: map[string]time.Duration{}}
	log := zerolog.New(io.Discard).Level(zerolog.WarnLevel)
	r := &served{running: start(t, nil, proc, log, WithAccounts(src), WithPollOptions(poll.WithCycleObserver(cyc.hook))), s: proc}
	t.Cleanup(func() { r.stop(t) })

	// Long enough for several slow answers.
	simtest.WaitFor(t, 60*time.Second, "30 calls cycles of each healthy account and a slow answer", func() bool {
		a, _, _ := cyc.get("acme")
		g, _, _ := cyc.get("globex")
		s, sf, _ := cyc.get("sluggish")
		return a >= 30 && g >= 30 && s+sf >= 2
	})
	for _, name := range []string{"acme", "globex"} {
		ok, failed, longest := cyc.get(name)
		t.Logf("%s: %d calls cycles, %d failed, longest wait between two %s", name, ok, failed, longest)
		if longest >= slowLatency || failed > 0 {
			t.Errorf("%s: %d calls cycles, %d failed, longest wait %s: it waited as long as the slow account's answers (%s)",
				name, ok, failed, longest, slowLatency)
		}
	}
	if ok, failed, _ := cyc.get("denied"); ok > 0 {
		t.Errorf("denied: %d calls cycles succeeded (%d failed) with a refused key", ok, failed)
	}
	checkFleetStatus(t, r, len(accounts))
	checkFleetStream(t, ns, "acme", "globex")
	metrics := scrape(t, proc.HTTPAddr)
	for _, want := range []string{`callbus_leader{account="acme"} 1`, `callbus_leader{account="denied"} 1`,
		`callbus_api_requests_total{account="denied",operation="list calls",status="401"}`,
		`callbus_outbox_depth{account="sluggish"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, metrics)
		}
	}
}

// checkFleetStatus checks /status: a member of a one-replica fleet leading
// every account.
func checkFleetStatus(t *testing.T, r *served, n int) {
	t.Helper()
	var st Status
	simtest.WaitFor(t, 30*time.Second, "every account led on /status", func() bool {
		st = Status{}
		resp, err := http.Get("http://" + r.s.HTTPAddr + "/status?format=json")
		if err != nil {
			return false // not serving yet
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		led := 0
		for _, a := range st.Accounts {
			if a.Role == "leader" && a.Leader == st.Instance {
				led++
			}
		}
		return led == n
	})
	if st.Role != "member" || st.Fleet == nil || len(st.Fleet.Members) != 1 || st.Fleet.Members[0] != st.Instance || st.Fleet.Listed != n {
		t.Errorf("status %+v (fleet %+v): want a member alone in the fleet, %d accounts listed", st, st.Fleet, n)
	}
	var text strings.Builder
	if err := st.WriteText(&text); err != nil || !strings.Contains(text.String(), "members") {
		t.Errorf("poller status text lacks the members (%v):\n%s", err, text.String())
	}
}

// checkFleetStream waits until each named account has call events in the stream.
func checkFleetStream(t *testing.T, ns *natstest.Server, names ...string) {
	t.Helper()
	counts := map[string]int{}
	simtest.WaitFor(t, 30*time.Second, "call events of every healthy account", func() bool {
		clear(counts)
		for _, m := range readStream(t, ns) {
			for _, name := range names {
				if strings.HasPrefix(m.Subject, fmt.Sprintf("callcenter.%s.call.", name)) {
					counts[name]++
				}
			}
		}
		return len(counts) == len(names)
	})
}

// An account removed from the source is handed off: its lease is released, it
// leaves /status, its scrape-time gauges leave /metrics and callbus_leader of it
// reads 0; the other account goes on.
func TestFleetAccountRemoved(t *testing.T) {
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	src := &staticAccounts{s: map[string]config.Settings{}}
	for _, name := range []string{"acme", "globex"} {
		s := testSettings(newWorld(t, nil), ns.URL(), rs.URL, "fleet-1")
		s.Account = name
		src.s[name] = s
	}
	proc := testSettings(&simtest.World{URL: "http://127.0.0.1:1"}, ns.URL(), rs.URL, "fleet-1")
	proc.Account, proc.HTTPAddr = "", simtest.FreeAddr(t)
	r := &served{running: start(t, nil, proc, zerolog.New(io.Discard), WithAccounts(src)), s: proc}
	t.Cleanup(func() { r.stop(t) })
	checkFleetStatus(t, r, 2)

	src.mu.Lock()
	delete(src.s, "globex")
	src.mu.Unlock()
	var metrics string
	simtest.WaitFor(t, 30*time.Second, "globex handed off", func() bool {
		var st Status
		if err := decodeStatus(r.get(t, "/status?format=json", ""), &st); err != nil {
			t.Fatal(err)
		}
		metrics = scrape(t, proc.HTTPAddr)
		return len(st.Accounts) == 1 && st.Accounts[0].Account == "acme" && !strings.Contains(metrics, `callbus_outbox_depth{account="globex"}`)
	})
	for _, want := range []string{`callbus_leader{account="globex"} 0`, `callbus_leader{account="acme"} 1`, `callbus_outbox_depth{account="acme"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if n, err := redis.NewClient(&redis.Options{Addr: rs.Addr}).Exists(t.Context(), "callbus:{globex}:lease").Result(); err != nil || n != 0 {
		t.Errorf("globex's lease is still held (%d, %v): the hand-off did not release it", n, err)
	}
}
