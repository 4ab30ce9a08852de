package service

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/secret"
	"github.com/rs/zerolog"
)

// Status is what GET /status shows: this replica's role, each account it serves
// with its leader, per-resource intervals, rate budget, outbox and last events,
// and the last warnings and errors it logged. It holds no secret (secret values
// are masked out of every message). `poller status` decodes it from
// /status?format=json.
type Status struct {
	Instance string `json:"instance"` // this replica's lease holder name
	Version  string `json:"version"`
	// Role is "leader" or "standby" for the one account of a single-account
	// replica, "member" in fleet mode (each account has its own role).
	Role     string          `json:"role"`
	Started  time.Time       `json:"started"`
	Now      time.Time       `json:"now"`
	Fleet    *FleetStatus    `json:"fleet,omitempty"` // fleet mode only
	Accounts []AccountStatus `json:"accounts"`        // by name
	Errors   []StatusLine    `json:"errors"`          // newest first
}

// FleetStatus is the fleet as this replica sees it: the live members (lease
// holder names), how many accounts the source lists, and the account files it
// refused.
type FleetStatus struct {
	Members  []string `json:"members"`
	Listed   int      `json:"listed"`
	Problems []string `json:"problems,omitempty"`
}

// AccountStatus is one account as this replica sees it.
type AccountStatus struct {
	Account string `json:"account"`
	Role    string `json:"role"` // of this replica: "leader" or "standby"
	// Draining: the account is no longer configured (its file removed or
	// refused) and this replica publishes what its outbox still holds
	// (Outbox.Depth events left); it leaves the page once the outbox is empty.
	Draining        bool             `json:"draining,omitempty"`
	Leader          string           `json:"leader"` // holder named by Redis; "" when nobody leads
	LeaseTTLSeconds float64          `json:"lease_ttl_seconds"`
	LeaderError     string           `json:"leader_error,omitempty"` // Redis could not tell
	Resources       []ResourceStatus `json:"resources"`
	Budget          BudgetStatus     `json:"budget"`
	Outbox          OutboxStatus     `json:"outbox"`
	Events          []StatusLine     `json:"events"` // newest first
	// Policy is the version of the account's data policy ("keep": none, every
	// value as the API gives it); never its key.
	Policy string `json:"policy"`
	// History says why the account's last backfill gave up (its history is
	// incomplete: paged reads took over); empty otherwise.
	History string `json:"history,omitempty"`
}

// ResourceStatus is one polled resource: its target (configured) and effective
// interval in seconds (effective is 0 until this replica has led), and its last
// cycle as seen here.
type ResourceStatus struct {
	Name             string    `json:"name"`
	TargetSeconds    float64   `json:"target_seconds"`
	EffectiveSeconds float64   `json:"effective_seconds"`
	LastCycle        time.Time `json:"last_cycle,omitzero"`
	LastRequests     int       `json:"last_requests"`
	LastError        string    `json:"last_error,omitempty"`
}

// BudgetStatus is the rate budget: Limit is the account's (0 until learned),
// Budget callbus's share of it per minute, UsedInWindow what it used in the last
// minute; ServerRemaining is the last X-RateLimit-Remaining (-1: unknown).
type BudgetStatus struct {
	Share           float64 `json:"share"`
	Limit           int     `json:"limit"`
	Budget          int     `json:"budget"`
	UsedInWindow    int     `json:"used_in_window"`
	ServerRemaining int     `json:"server_remaining"`
	Throttled       uint64  `json:"throttled"` // 429s seen since start
}

// OutboxStatus is the events committed and not yet acknowledged by JetStream.
type OutboxStatus struct {
	Depth      int64   `json:"depth"`
	LagSeconds float64 `json:"lag_seconds"` // age of the oldest
	Error      string  `json:"error,omitempty"`
}

// StatusLine is one event or one logged problem.
type StatusLine struct {
	Time time.Time `json:"time"`
	Kind string    `json:"kind"` // event type, or log level
	Text string    `json:"text"` // event subject and id, or the message
}

// statusLines is how many events and errors the page keeps.
const statusLines = 12

// statusBoard collects what the status page shows: the process's part here (the
// last warnings and errors it logged, the fleet), each served account's on its
// accountBoard. It reads the rest (leadership, budget, outbox) when asked. It is
// safe for concurrent use.
type statusBoard struct {
	version string
	started time.Time
	secrets secretList

	mu       sync.Mutex
	instance string
	fleet    func() FleetStatus // nil: a single-account replica
	accounts map[string]*accountBoard
	errors   []StatusLine
}

func newStatusBoard(version string) *statusBoard {
	return &statusBoard{version: version, started: time.Now(), accounts: map[string]*accountBoard{}}
}

// setInstance names this replica (its lease holder name) on the page.
func (b *statusBoard) setInstance(holder string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.instance = holder
}

// setFleet shows the fleet, read from f at each request: fleet mode.
func (b *statusBoard) setFleet(f func() FleetStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fleet = f
}

// add shows the account of s (replacing one of the same name) and masks its
// secrets out of every message from now on; remove takes it off.
func (b *statusBoard) add(s config.Settings) *accountBoard { return b.show(s, false) }

// addDraining shows a retired account whose outbox this replica drains: no
// resources, no budget, its outbox and last events.
func (b *statusBoard) addDraining(s config.Settings) *accountBoard {
	s.Resources = nil
	return b.show(s, true)
}

func (b *statusBoard) show(s config.Settings, draining bool) *accountBoard {
	b.secrets.add(s.APIKey, s.NATSPassword, s.RedisPassword)
	a := newAccountBoard(s, b.secrets.mask)
	a.draining = draining
	b.mu.Lock()
	defer b.mu.Unlock()
	b.accounts[s.Account] = a
	return a
}

// remove takes a off the page, unless another board of its account replaced it.
func (b *statusBoard) remove(a *accountBoard) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.accounts[a.account] == a {
		delete(b.accounts, a.account)
	}
}

// Run makes the board a zerolog hook: it keeps the last warnings and errors
// logged (their messages; fields such as err stay in the log).
func (b *statusBoard) Run(_ *zerolog.Event, level zerolog.Level, msg string) {
	if level < zerolog.WarnLevel || level == zerolog.NoLevel {
		return
	}
	line := StatusLine{Time: time.Now(), Kind: level.String(), Text: b.secrets.mask(msg)}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = keepLast(append(b.errors, line))
}

// keepLast drops the oldest entries beyond statusLines.
func keepLast[T any](s []T) []T {
	if over := len(s) - statusLines; over > 0 {
		return slices.Delete(s, 0, over)
	}
	return s
}

// snapshot reads the status now; Redis reads are bound to ctx.
func (b *statusBoard) snapshot(ctx context.Context) Status {
	b.mu.Lock()
	st := Status{Instance: b.instance, Version: b.version, Role: "standby", Started: b.started, Now: time.Now()}
	for i := len(b.errors) - 1; i >= 0; i-- {
		st.Errors = append(st.Errors, b.errors[i])
	}
	fleet := b.fleet
	accounts := make([]*accountBoard, 0, len(b.accounts))
	for _, name := range slices.Sorted(maps.Keys(b.accounts)) {
		accounts = append(accounts, b.accounts[name])
	}
	b.mu.Unlock()
	st.Accounts = snapshotAll(ctx, accounts)
	if fleet != nil {
		fs := fleet()
		st.Fleet, st.Role = &fs, "member"
	} else if len(st.Accounts) == 1 {
		st.Role = st.Accounts[0].Role
	}
	return st
}

// statusReaders bounds the accounts whose Redis state one request reads at once.
const statusReaders = 16

// snapshotAll reads the accounts' status, several at once: a fleet member may
// serve hundreds, each needing a few Redis round trips.
func snapshotAll(ctx context.Context, accounts []*accountBoard) []AccountStatus {
	out := make([]AccountStatus, len(accounts))
	sem := make(chan struct{}, statusReaders)
	var wg sync.WaitGroup
	for i, a := range accounts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = a.snapshot(ctx)
		})
	}
	wg.Wait()
	return out
}

// secretList is the secret values masked out of the page's messages. It is safe
// for concurrent use.
type secretList struct {
	mu   sync.RWMutex
	vals []string
}

func (l *secretList) add(vals ...secret.Value) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range vals {
		if r := v.Reveal(); r != "" && !slices.Contains(l.vals, r) {
			l.vals = append(l.vals, r)
		}
	}
}

// mask replaces every secret value in s.
func (l *secretList) mask(s string) string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, v := range l.vals {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}
