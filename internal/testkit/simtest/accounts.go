package simtest

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
)

// Accounts is a multi-account simulator (sim.Accounts) served over HTTP, each
// account's truth log kept in memory.
type Accounts struct {
	*sim.Accounts
	URL   string           // the server's root; account A's base URL is URL + "/a/A"
	Clock *sim.ManualClock // the clock all accounts share: Run moves it

	clockRunner // Run and Freeze, on NewAccounts' clock; worlds catch up when asked

	mu    sync.Mutex
	truth map[string]*Buffer
}

// AccountKey is the API key NewAccounts gives account name.
func AccountKey(name string) string { return "key-" + name }

// NewAccounts serves n accounts (acct001…) on one manual clock at the current
// second, which only Run moves: account i has seed i+1 and key AccountKey(name),
// and whatever configure (may be nil) sets on top (Clock, Start and Truth are the
// harness's). The server closes when the test ends.
func NewAccounts(t testing.TB, n int, configure func(i int, name string, c *sim.Config)) *Accounts {
	t.Helper()
	clock := sim.NewManualClock(time.Now().UTC().Truncate(time.Second))
	a := NewAccountsOn(t, n, clock, configure)
	a.Clock, a.advance = clock, clock.Advance
	return a
}

// NewAccountsOn is NewAccounts on the given clock (a sim.ScaledClock at speed 1
// from now, say, for delays measured in real time); Run and Clock are for the
// manual clock of NewAccounts only.
func NewAccountsOn(t testing.TB, n int, clock sim.Clock, configure func(i int, name string, c *sim.Config)) *Accounts {
	t.Helper()
	a := &Accounts{truth: map[string]*Buffer{}}
	sa, err := sim.NewAccounts(sim.AccountsConfig{
		Names: sim.AccountNames(n),
		Clock: clock,
		Config: func(i int, name string) sim.Config {
			c := sim.Config{Seed: uint64(i + 1), APIKey: AccountKey(name)}
			if configure != nil {
				configure(i, name, &c)
			}
			return c
		},
		Truth: func(name string) (io.Writer, error) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.truth[name] = &Buffer{}
			return a.truth[name], nil
		},
	})
	if err != nil {
		t.Fatalf("sim.NewAccounts: %v", err)
	}
	a.Accounts, a.URL = sa, serve(t, sa.Handler())
	return a
}

// BaseURL is account name's API base URL, for api_url.
func (a *Accounts) BaseURL(name string) string { return a.URL + sim.AccountPrefix + name }

// ReadTruth runs account name's world up to the clock (building it if no one
// asked for it yet), flushes its truth log and parses it. The account keeps
// serving.
func (a *Accounts) ReadTruth(t testing.TB, name string) *audit.Truth {
	t.Helper()
	s, err := a.Sim(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("sim close %s: %v", name, err)
	}
	a.mu.Lock()
	buf := a.truth[name]
	a.mu.Unlock()
	truth, err := audit.ReadTruth(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("truth of %s: %v", name, err)
	}
	truth.Hide(s.HiddenParticipants()...)
	return truth
}
