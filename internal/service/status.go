package service

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/rs/zerolog"
)

// Status is what GET /status shows: this replica's role, each account it serves
// with its leader, per-resource intervals, rate budget, outbox and last events,
// and the last warnings and errors it logged. It holds no secret (secret values
// are masked out of every message). `poller status` decodes it from
// /status?format=json.
type Status struct {
	Instance string          `json:"instance"` // this replica's lease holder name
	Version  string          `json:"version"`
	Role     string          `json:"role"` // "leader" or "standby"
	Started  time.Time       `json:"started"`
	Now      time.Time       `json:"now"`
	Accounts []AccountStatus `json:"accounts"`
	Errors   []StatusLine    `json:"errors"` // newest first
}

// AccountStatus is one account as this replica sees it.
type AccountStatus struct {
	Account         string           `json:"account"`
	Leader          string           `json:"leader"` // holder named by Redis; "" when nobody leads
	LeaseTTLSeconds float64          `json:"lease_ttl_seconds"`
	LeaderError     string           `json:"leader_error,omitempty"` // Redis could not tell
	Resources       []ResourceStatus `json:"resources"`
	Budget          BudgetStatus     `json:"budget"`
	Outbox          OutboxStatus     `json:"outbox"`
	Events          []StatusLine     `json:"events"` // newest first
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

// statusBoard collects what the status page shows, from the poller's and the
// relay's hooks and the service's logger, and reads the rest (leadership, budget,
// outbox) when asked. It is safe for concurrent use.
type statusBoard struct {
	account, version string
	share            float64
	targets          map[string]time.Duration
	secrets          []string
	started          time.Time

	// Set by attach once the service has built them.
	lead  *poll.Leadership
	store *cursor.Store
	lim   *callcenter.Limiter

	mu        sync.Mutex
	effective map[string]time.Duration
	cycles    map[string]ResourceStatus
	events    []published // newest last, at most statusLines
	errors    []StatusLine
}

// published is an acknowledged event, as the page shows it: its type and id (the
// body is not decoded again: the record carries what the page needs).
type published struct {
	at  time.Time
	typ string
	id  string
}

func newStatusBoard(s config.Settings, version string) *statusBoard {
	share := s.RateLimitShare
	if share == 0 {
		share = callcenter.DefaultShare
	}
	b := &statusBoard{account: s.Account, version: version, share: share, targets: pollConfig(s).Intervals,
		started: time.Now(), effective: map[string]time.Duration{}, cycles: map[string]ResourceStatus{}}
	for _, v := range []string{s.APIKey.Reveal(), s.NATSPassword.Reveal(), s.RedisPassword.Reveal()} {
		if v != "" {
			b.secrets = append(b.secrets, v)
		}
	}
	return b
}

// attach gives the board the parts it reads at request time.
func (b *statusBoard) attach(lead *poll.Leadership, store *cursor.Store, lim *callcenter.Limiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lead, b.store, b.lim = lead, store, lim
}

// pollOptions record cycles and effective intervals on the board.
func (b *statusBoard) pollOptions() []poll.Option {
	return []poll.Option{poll.WithCycleObserver(b.cycle), poll.WithIntervalObserver(b.intervals)}
}

// cycle keeps a resource's last cycle (poll.CycleObserver).
func (b *statusBoard) cycle(_ context.Context, res string, _ time.Duration, requests int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rs := ResourceStatus{LastCycle: time.Now(), LastRequests: requests}
	if err != nil {
		rs.LastError = b.mask(err.Error())
	}
	b.cycles[res] = rs
}

// intervals keeps the effective intervals.
func (b *statusBoard) intervals(_ context.Context, eff map[string]time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for res, d := range eff {
		b.effective[res] = d
	}
}

// published keeps the last acknowledged events, then calls also.
func (b *statusBoard) published(also func(publish.Record)) func(publish.Record) {
	return func(r publish.Record) {
		b.mu.Lock()
		b.events = keepLast(append(b.events, published{at: time.Now(), typ: string(r.Type), id: r.ID}))
		b.mu.Unlock()
		if also != nil {
			also(r)
		}
	}
}

// Run makes the board a zerolog hook: it keeps the last warnings and errors
// logged (their messages; fields such as err stay in the log).
func (b *statusBoard) Run(_ *zerolog.Event, level zerolog.Level, msg string) {
	if level < zerolog.WarnLevel || level == zerolog.NoLevel {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = keepLast(append(b.errors, StatusLine{Time: time.Now(), Kind: level.String(), Text: b.mask(msg)}))
}

// keepLast drops the oldest entries beyond statusLines.
func keepLast[T any](s []T) []T {
	if over := len(s) - statusLines; over > 0 {
		return slices.Delete(s, 0, over)
	}
	return s
}

// mask replaces every secret value in s.
func (b *statusBoard) mask(s string) string {
	for _, v := range b.secrets {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}

// snapshot reads the status now; Redis reads are bound to ctx.
func (b *statusBoard) snapshot(ctx context.Context) Status {
	b.mu.Lock()
	lead, store, lim := b.lead, b.store, b.lim
	st := Status{Version: b.version, Role: "standby", Started: b.started, Now: time.Now()}
	acct := AccountStatus{Account: b.account, Budget: BudgetStatus{Share: b.share, ServerRemaining: -1}}
	for _, res := range slices.Sorted(maps.Keys(b.targets)) {
		rs := b.cycles[res]
		rs.Name, rs.TargetSeconds, rs.EffectiveSeconds = res, b.targets[res].Seconds(), b.effective[res].Seconds()
		acct.Resources = append(acct.Resources, rs)
	}
	for i := len(b.events) - 1; i >= 0; i-- {
		e := b.events[i]
		acct.Events = append(acct.Events, StatusLine{Time: e.at, Kind: e.typ, Text: e.id})
	}
	for i := len(b.errors) - 1; i >= 0; i-- {
		st.Errors = append(st.Errors, b.errors[i])
	}
	b.mu.Unlock()
	if lead != nil {
		st.Instance = lead.Holder()
		if lead.IsLeader() {
			st.Role = "leader"
		}
	}
	if lim != nil {
		ls := lim.Stats()
		acct.Budget.Limit, acct.Budget.Budget, acct.Budget.UsedInWindow = ls.Limit, ls.Budget, ls.UsedInWindow
		acct.Budget.ServerRemaining, acct.Budget.Throttled = ls.ServerRemaining, ls.Throttled
	}
	if store != nil {
		b.readStore(ctx, store, &acct)
	}
	st.Accounts = []AccountStatus{acct}
	return st
}

// readStore fills the leader and the outbox from Redis.
func (b *statusBoard) readStore(ctx context.Context, store *cursor.Store, acct *AccountStatus) {
	holder, _, ttl, err := store.Leader(ctx)
	if err != nil {
		acct.LeaderError = b.mask(err.Error())
	}
	acct.Leader, acct.LeaseTTLSeconds = holder, ttl.Seconds()
	n, err := store.OutboxLen(ctx)
	if err == nil {
		var oldest time.Time
		var ok bool
		oldest, ok, err = store.OutboxOldest(ctx)
		if ok {
			acct.Outbox.LagSeconds = time.Since(oldest).Seconds()
		}
	}
	acct.Outbox.Depth = n
	if err != nil {
		acct.Outbox.Error = b.mask(err.Error())
	}
}
