package poll

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// ErrLostLease is returned by Run when a commit was refused because another
// replica holds the account's lease now.
var ErrLostLease = errors.New("poller: lost the account's lease")

// Run polls until ctx ends or the lease is lost (ErrLostLease). lease returns the
// lease currently held (renewed by the caller); every commit is fenced by it.
//
// Scheduling (schedule.go): a resource is due its effective interval after its
// last turn, the intervals recomputed after every cycle from the rate budget
// (allocateKeeping) and each resource's measured cost, and applied at once to
// every wait; when several are due the one due longest runs first. Cycles run
// one at a time: the request budget, not concurrency, is the limit, and
// sequential cycles need no locking between the calls and metrics diffs.
func (p *Poller) Run(ctx context.Context, lease func() cursor.Lease) error {
	p.lease, p.guard.lastOutboxID = lease, ""
	err := apart(func() error {
		err := p.loadEpoch(ctx)
		if err == nil {
			err = p.reconcileState(ctx) // before the term's first commit of events
		}
		return err
	})
	if err != nil {
		if errors.Is(err, cursor.ErrStaleLeader) {
			return ErrLostLease
		}
		return err
	}
	sch := newSchedule(p.resourcesByPriority())
	p.marks.mu.Lock()
	p.marks.until, p.marks.next = nil, time.Now().Add(p.cfg.WatermarkInterval) // this term's marks
	p.marks.mu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var wait time.Duration
		if err := apart(func() (err error) { wait, err = p.turn(ctx, sch); return err }); err != nil {
			return err
		}
		if wait <= 0 {
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// turn is one turn of Run's loop: the look between cycles, then the cycle due,
// if any. It returns how long Run waits before the next turn (0: none), or
// Run's error.
func (p *Poller) turn(ctx context.Context, sch *schedule) (time.Duration, error) {
	res, _ := sch.due(time.Now())
	w, read := p.look(ctx, res != "")
	// The outbox bound holds back what commits events: a cycle, a resync.
	hold := res != "" || w.Resync || p.ops == nil
	if err := p.beforeCycle(ctx, w, read, hold); err != nil {
		if errors.Is(err, cursor.ErrStaleLeader) {
			return 0, ErrLostLease
		}
		return 0, err
	}
	if err := p.watermarkIfDue(ctx); errors.Is(err, cursor.ErrStaleLeader) {
		return 0, ErrLostLease
	} else if err != nil && ctx.Err() == nil {
		p.log.Warn().Err(err).Msg("watermark not committed; trying again")
	}
	if err := p.resyncIfRequested(ctx, w.Resync); errors.Is(err, cursor.ErrStaleLeader) {
		return 0, ErrLostLease
	} else if err != nil && ctx.Err() == nil {
		p.log.Warn().Err(err).Msg("resync: the request queue cannot be read; trying again")
	}
	res, wait := sch.due(time.Now())
	if res == "" {
		if p.resync.queue != nil || p.ops != nil {
			wait = min(wait, lookEvery)
		}
		return p.watermarkWait(wait), nil
	}
	if !hold { // due since the look: the outbox bound is checked before every cycle
		if err := p.holdForOutbox(ctx, 0, false); err != nil {
			if errors.Is(err, cursor.ErrStaleLeader) {
				return 0, ErrLostLease
			}
			return 0, err
		}
	}
	start := time.Now()
	used, usage, err := p.tracedCycle(ctx, res)
	if errors.Is(err, cursor.ErrStaleLeader) {
		return 0, ErrLostLease
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	sch.ran(res, start, used)
	sch.setIntervals(p.allocate(ctx, sch.cost(), usage, &sch.pace), time.Now())
	if err != nil {
		p.log.Warn().Err(err).Str("resource", res).Msg("poll cycle failed; retrying")
		sch.failed(res, time.Now())
	} else {
		p.noteCycle(res)
	}
	p.log.Debug().Str("resource", res).Dur("took_ms", time.Since(start)).Int("requests", used).
		Int("others", usage.Others).Dur("next_in_ms", time.Until(sch.next(res))).Msg("poll cycle")
	return 0, nil
}

// tracedCycle runs one resource's poll in its span and tells the observers; it
// returns the API requests the cycle spent and the rate budget's use after it.
func (p *Poller) tracedCycle(ctx context.Context, res string) (used int, usage callcenter.Usage, err error) {
	start := time.Now()
	before := p.api.Usage()
	ctx, span := p.tracer.Start(ctx, "poll "+res, trace.WithAttributes(attribute.String("callbus.resource", res)))
	defer span.End()
	begin := p.readBegins()
	err = p.cycle(ctx, res)
	if _, cerr := p.commits.wait(); err == nil {
		err = cerr // a background commit the cycle did not wait for (it failed before)
	}
	if err == nil {
		p.readDone(res, begin)
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	usage = p.api.Usage()
	used = int(usage.Requests - before.Requests)
	for _, f := range p.cycleObservers {
		f(ctx, res, time.Since(start), used, err)
	}
	return used, usage, err
}

// cycle runs one resource's poll.
func (p *Poller) cycle(ctx context.Context, res string) error {
	switch res {
	case ResCalls:
		return p.pollCalls(ctx)
	case ResMetrics:
		return p.pollMetrics(ctx)
	case ResUsers:
		return p.pollUsers(ctx)
	case ResUserStatuses:
		return p.pollStatuses(ctx)
	case ResTeams:
		return p.pollTeams(ctx)
	}
	return nil
}

func (p *Poller) resourcesByPriority() []string {
	var out []string
	for r := range p.cfg.Intervals {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b string) int {
		if pa, pb := p.cfg.Priorities[a], p.cfg.Priorities[b]; pa != pb {
			return pb - pa
		}
		if a < b {
			return -1
		}
		return 1
	})
	return out
}

// allocate recomputes the effective intervals from the budget's use (see
// spendable), each shrinking toward the floor at the account's pace.
func (p *Poller) allocate(ctx context.Context, cost map[string]float64, u callcenter.Usage, pc *pace) map[string]time.Duration {
	var ds []Demand
	for r, target := range p.cfg.Intervals {
		ds = append(ds, Demand{Name: r, Target: target, Priority: p.cfg.Priorities[r], Cost: cost[r], Floor: pc.floor(target, p.cfg.IntervalFloor)})
	}
	eff := allocateKeeping(spendable(u), budgetHeadroom, p.cfg.RateWindow, ds)
	if u.Budget == 0 { // limit unknown yet: keep the targets, the limiter paces requests
		for r, target := range p.cfg.Intervals {
			eff[r] = target
		}
	}
	p.mu.Lock()
	p.effective = eff
	p.mu.Unlock()
	for _, f := range p.intervalObservers {
		f(ctx, eff)
	}
	return eff
}

// budgetHeadroom is the part of the spendable budget the intervals are planned
// to use (allocateKeeping): the rest absorbs costs measured late, retries above
// their mean and the server's rate windows not lining up with the limiter's.
const budgetHeadroom = 0.95

// spendable is the requests per rate window the intervals share (budgetHeadroom
// of it planned): this service's budget (its share of the account's limit) less what other
// integrations were seen taking in the last window, since the limiter keeps the
// reserve free whoever spends the rest; 0 while the limit is unknown. It never
// exceeds the share, and falls as soon as X-RateLimit-Remaining shows others
// taking more, so the intervals stretch before the limiter has to hold requests
// back.
func spendable(u callcenter.Usage) float64 {
	if u.Budget <= 0 {
		return 0
	}
	return float64(max(u.Budget-u.Others, 1))
}
