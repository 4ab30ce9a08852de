package service

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/backfill"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/telemetry"
)

// accountBoard is one account's part of the status page: what its poller and
// relay report through their hooks, and the parts it reads at request time. It
// is safe for concurrent use.
type accountBoard struct {
	account  string
	draining bool // set before the board is shown (addDraining)
	share    float64
	policy   string // the data policy's version
	targets  map[string]time.Duration
	mask     func(string) string

	mu sync.Mutex
	// Set by attach once the service has built them.
	lead      *poll.Leadership
	store     *cursor.Store
	lim       *callcenter.Limiter
	effective map[string]time.Duration
	cycles    map[string]ResourceStatus
	events    []published // newest last, at most statusLines
}

// published is an acknowledged event, as the page shows it: its type and id (the
// body is not decoded again: the record carries what the page needs).
type published struct {
	at  time.Time
	typ string
	id  string
}

func newAccountBoard(s config.Settings, mask func(string) string) *accountBoard {
	share := s.RateLimitShare
	if share == 0 {
		share = callcenter.DefaultShare
	}
	pol := s.DataPolicy.Version()
	if pol == "" {
		pol = "keep"
	}
	return &accountBoard{account: s.Account, share: share, policy: pol, targets: pollConfig(s).Intervals, mask: mask,
		effective: map[string]time.Duration{}, cycles: map[string]ResourceStatus{}}
}

// attach gives the board the parts it reads at request time.
func (a *accountBoard) attach(lead *poll.Leadership, store *cursor.Store, lim *callcenter.Limiter) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lead, a.store, a.lim = lead, store, lim
}

// pollOptions record cycles and effective intervals on the board.
func (a *accountBoard) pollOptions() []poll.Option {
	return []poll.Option{poll.WithCycleObserver(a.cycle), poll.WithIntervalObserver(a.intervals)}
}

// cycle keeps a resource's last cycle (poll.CycleObserver).
func (a *accountBoard) cycle(_ context.Context, res string, _ time.Duration, requests int, err error) {
	rs := ResourceStatus{LastCycle: time.Now(), LastRequests: requests}
	if err != nil {
		rs.LastError = a.mask(err.Error())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cycles[res] = rs
}

// intervals keeps the effective intervals.
func (a *accountBoard) intervals(_ context.Context, eff map[string]time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for res, d := range eff {
		a.effective[res] = d
	}
}

// published keeps the last acknowledged events of each batch, then calls also
// with each record.
func (a *accountBoard) published(also func(event.Committed)) func([]publish.Published) {
	return func(ps []publish.Published) {
		now := time.Now()
		a.mu.Lock()
		for _, p := range ps[max(len(ps)-statusLines, 0):] { // the rest would drop out
			a.events = keepLast(append(a.events, published{at: now, typ: string(p.Type), id: p.ID}))
		}
		a.mu.Unlock()
		if also != nil {
			for _, p := range ps {
				also(p.Committed)
			}
		}
	}
}

// snapshot reads the account's status now; Redis reads are bound to ctx.
func (a *accountBoard) snapshot(ctx context.Context) AccountStatus {
	a.mu.Lock()
	lead, store, lim := a.lead, a.store, a.lim
	acct := AccountStatus{Account: a.account, Policy: a.policy, Role: "standby", Draining: a.draining, Budget: BudgetStatus{Share: a.share, ServerRemaining: -1}}
	for _, res := range slices.Sorted(maps.Keys(a.targets)) {
		rs := a.cycles[res]
		rs.Name, rs.TargetSeconds, rs.EffectiveSeconds = res, a.targets[res].Seconds(), a.effective[res].Seconds()
		acct.Resources = append(acct.Resources, rs)
	}
	for i := len(a.events) - 1; i >= 0; i-- {
		e := a.events[i]
		acct.Events = append(acct.Events, StatusLine{Time: e.at, Kind: e.typ, Text: e.id})
	}
	a.mu.Unlock()
	if lead != nil && lead.IsLeader() {
		acct.Role = "leader"
	}
	if lim != nil {
		ls := lim.Stats()
		acct.Budget.Limit, acct.Budget.Budget, acct.Budget.UsedInWindow = ls.Limit, ls.Budget, ls.UsedInWindow
		acct.Budget.ServerRemaining, acct.Budget.Throttled = ls.ServerRemaining, ls.Throttled
	}
	if store != nil {
		a.readStore(telemetry.ContextWithAccount(ctx, a.account), store, &acct)
	}
	return acct
}

// readStore fills the leader and the outbox from Redis.
func (a *accountBoard) readStore(ctx context.Context, store *cursor.Store, acct *AccountStatus) {
	holder, _, ttl, err := store.Leader(ctx)
	if err != nil {
		acct.LeaderError = a.mask(err.Error())
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
		acct.Outbox.Error = a.mask(err.Error())
	}
	if cur, err := store.Cursors(ctx); err == nil {
		if inc, ok := backfill.ReadIncomplete(cur); ok {
			acct.History = a.mask(inc.String())
		}
	}
}
