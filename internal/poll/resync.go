package poll

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/event"
)

// ResyncQueue is where the leader finds resync requests (`poller resync`) and
// reports their progress: the store (cursor.Store) as it is.
type ResyncQueue interface {
	TakeResync(ctx context.Context) (cursor.ResyncRequest, bool, error)
	ReportResync(ctx context.Context, run string, p cursor.ResyncProgress) error
}

// WithResync lets the leader run the resyncs queued in q, between poll cycles,
// as holder (named in the progress). Without it there are none.
func WithResync(q ResyncQueue, holder string) Option {
	return func(p *Poller) { p.resync.queue, p.resync.holder = q, holder }
}

// ResyncResources are the resources a resync re-announces, in its order of work.
var ResyncResources = []string{ResUsers, ResTeams, ResCalls}

// resyncing is the poller's resync state: the queue, and the run under way
// (nil between runs), whose snapshots the diffs of calls add (reannounce).
type resyncing struct {
	queue    ResyncQueue
	holder   string
	run      *resyncRun
	lastLook time.Time
}

// resyncRun is the run under way.
type resyncRun struct {
	req      cursor.ResyncRequest
	kind     string // the entity's kind when req.Entity names one ("calls")
	id       string // and its id
	entities int
	requests uint64 // the client's request count when the run began
	reported time.Time
}

// wants reports whether the run covers entity (e.g. "calls/812").
func (r *resyncRun) wants(entity string) bool {
	return r.req.Entity == "" || r.req.Entity == entity
}

// ParseEntity splits a resync entity, "calls/812", "users/8" or "teams/2", into
// its resource and id.
func ParseEntity(entity string) (resource string, id int64, err error) {
	res, sid, ok := strings.Cut(entity, "/")
	n, perr := strconv.ParseInt(sid, 10, 64)
	if !ok || perr != nil || (res != ResCalls && res != ResUsers && res != ResTeams) {
		return "", 0, fmt.Errorf("entity %q: want calls/<id>, users/<id> or teams/<id>", entity)
	}
	return res, n, nil
}

// reannounce returns the snapshot of entity the run under way re-announces,
// with data (its Resync set here): nil when no run is under way or it does not
// cover entity. Its id is stable within the run and distinct across runs.
func (p *Poller) reannounce(t events.Type, entity string, at time.Time, data func(events.Resync) any) ([]events.Envelope, error) {
	r := p.resync.run
	if r == nil || !r.wants(entity) {
		return nil, nil
	}
	env, err := event.New(p.cfg.Account, t, entity, "resync/"+r.req.Run, at, data(events.Resync{Run: r.req.Run}))
	if err != nil {
		return nil, err
	}
	r.entities++
	return []events.Envelope{env}, nil
}

// resyncIfRequested runs the next resync request, if any, between two cycles:
// when the last look found one (waiting), or without Ops every lookEvery.
// It returns cursor.ErrStaleLeader when the lease was lost (the run stays in
// Redis for the next leader, who resumes it under the same run id); any other
// failure is reported on the run, which ends.
func (p *Poller) resyncIfRequested(ctx context.Context, waiting bool) error {
	if p.resync.queue == nil || (p.ops != nil && !waiting) || (p.ops == nil && time.Since(p.resync.lastLook) < lookEvery) {
		return nil
	}
	p.resync.lastLook = time.Now()
	req, ok, err := p.resync.queue.TakeResync(ctx)
	if err != nil || !ok {
		return err
	}
	run := &resyncRun{req: req, requests: p.api.Usage().Requests}
	p.log.Info().Str("run", req.Run).Strs("resources", req.Resources).Str("entity", req.Entity).Msg("resync: started")
	p.resync.run = run
	defer func() { p.resync.run = nil }()
	err = p.runResync(ctx, run)
	if errors.Is(err, cursor.ErrStaleLeader) || ctx.Err() != nil {
		return err // resumed by the next leader
	}
	st := cursor.ResyncProgress{State: cursor.ResyncDone}
	if err != nil {
		st = cursor.ResyncProgress{State: cursor.ResyncFailed, Error: err.Error()}
		p.log.Error().Err(err).Str("run", req.Run).Msg("resync failed")
	} else {
		p.log.Info().Str("run", req.Run).Int("entities", run.entities).Msg("resync: done")
	}
	return p.reportResync(ctx, run, st, true)
}

// runResync re-announces what the run covers, resource by resource.
func (p *Poller) runResync(ctx context.Context, run *resyncRun) error {
	if run.req.Entity != "" {
		res, id, err := ParseEntity(run.req.Entity)
		if err != nil {
			return err
		}
		run.kind, run.id = res, strconv.FormatInt(id, 10)
	}
	for _, res := range run.req.Resources {
		if run.kind != "" && res != run.kind {
			continue
		}
		if err := p.reportResync(ctx, run, cursor.ResyncProgress{State: cursor.ResyncRunning, Resource: res}, true); err != nil {
			return err
		}
		var err error
		switch res {
		case ResUsers:
			err = p.resyncUsers(ctx, run)
		case ResTeams:
			err = p.resyncTeams(ctx)
		case ResCalls:
			err = p.resyncCalls(ctx, run)
		default:
			err = fmt.Errorf("resource %q cannot be resynced (want users, teams or calls)", res)
		}
		if err != nil {
			return fmt.Errorf("resync %s: %w", res, err)
		}
		// A long run keeps the watermarks going between its resources.
		if err := p.watermarkIfDue(ctx); err != nil {
			return err
		}
	}
	return nil
}

// reportResync writes the run's progress, at most every half second unless
// force.
func (p *Poller) reportResync(ctx context.Context, run *resyncRun, st cursor.ResyncProgress, force bool) error {
	if !force && time.Since(run.reported) < 500*time.Millisecond {
		return nil
	}
	run.reported = time.Now()
	if st.Resource == "" && st.State == cursor.ResyncRunning {
		return nil
	}
	st.Holder, st.Entities = p.resync.holder, run.entities
	st.Requests = int(p.api.Usage().Requests - run.requests)
	return p.resync.queue.ReportResync(ctx, run.req.Run, st)
}

// resyncUsers reads every user and diffs each against its snapshot as a poll
// would, re-announcing each after any change found.
func (p *Poller) resyncUsers(ctx context.Context, run *resyncRun) error {
	if err := p.pollStatuses(ctx); err != nil {
		return err
	}
	users, _, err := readList(p.api.UsersPages(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}), func(u events.User) int64 { return u.ID })
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	seen := p.now()
	return p.diffAll(ctx, "users", kindUser, len(users), func(i int) int64 { return users[i].ID },
		func(i int, prev []byte) (diff.Result, error) {
			r, err := diff.User(p.scope, prev, users[i], p.names, seen)
			if err != nil {
				return r, err
			}
			u := users[i]
			state := events.UserState{Status: u.Status, StatusName: p.names.Status(u.Status),
				Preference: u.Preference, PreferenceName: p.names.Preference(u.Preference),
				MobileAppPreference: u.MobileAppPreference, MobileAppPreferenceName: p.names.Preference(u.MobileAppPreference)}
			return p.withSnapshot(r, events.UserSnapshot, "users/"+strconv.FormatInt(u.ID, 10), seen, func(r events.Resync) any {
				return &events.UserSnapshotData{User: u, State: state, Resync: r}
			})
		}, nil) // nil: every user is diffed, to be re-announced
}

// resyncTeams reads every team and re-announces each after any change found.
func (p *Poller) resyncTeams(ctx context.Context) error {
	teams, _, err := readList(p.api.TeamsPages(ctx, callcenter.ListOptions{PerPage: p.cfg.PerPage}), func(t events.Team) int64 { return t.ID })
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	seen := p.now()
	return p.diffAll(ctx, "teams", kindTeam, len(teams), func(i int) int64 { return teams[i].ID },
		func(i int, prev []byte) (diff.Result, error) {
			r, err := diff.Team(p.scope, prev, teams[i], seen)
			if err != nil {
				return r, err
			}
			return p.withSnapshot(r, events.TeamSnapshot, "teams/"+strconv.FormatInt(teams[i].ID, 10), seen, func(r events.Resync) any {
				return &events.TeamSnapshotData{Team: teams[i], Resync: r}
			})
		}, nil)
}

// withSnapshot adds the run's snapshot of entity to r, after its events, and
// marks r changed so that diffAll commits it (its snapshot unchanged when it
// was not).
func (p *Poller) withSnapshot(r diff.Result, t events.Type, entity string, at time.Time, data func(events.Resync) any) (diff.Result, error) {
	again, err := p.reannounce(t, entity, at, data)
	if err != nil || again == nil {
		return r, err
	}
	r.Events = append(r.Events, again...)
	r.Changed = true
	return r, nil
}

// resyncCalls re-announces the calls the poller knows: the one named, or every
// call created since the request's Since (by default the calls_backfill_hours
// window), read as the calls poll reads them and diffed the same way, each
// snapshot after the changes found. Calls pruned long ago are not known and not
// re-announced.
func (p *Poller) resyncCalls(ctx context.Context, run *resyncRun) error {
	cur, err := p.store.Cursors(ctx)
	if err != nil {
		return fmt.Errorf("read cursors: %w", err)
	}
	now := p.now()
	pruned := minTime(parseTime(cur[cursorPruned]), p.horizon(minTime(parseTime(cur[cursorHighWater]), now)))
	bt := p.newBatcher(ctx)
	sink := &callSink{p: p, bt: bt, pruned: pruned}
	if run.id != "" {
		c, err := p.api.GetCall(ctx, mustID(run.id))
		if err != nil {
			return fmt.Errorf("read call %s: %w", run.id, err)
		}
		err = sink.add([]events.Call{c})
	} else {
		from := run.req.Since
		if from.IsZero() {
			from = now.Add(-p.cfg.Backfill)
		}
		err = p.listCalls(ctx, from, func(page []events.Call) error {
			if err := sink.add(page); err != nil {
				return err
			}
			return p.reportResync(ctx, run, cursor.ResyncProgress{State: cursor.ResyncRunning, Resource: ResCalls}, false)
		})
	}
	if err != nil {
		return err
	}
	return bt.flush()
}
