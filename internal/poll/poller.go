package poll

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/policy"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Resource names: the one Go declaration of the options of the resources setting
// (config/iparams.json lists them; a service test checks that each maps here).
const (
	ResCalls        = "calls"
	ResMetrics      = "call_metrics"
	ResUsers        = "users"
	ResUserStatuses = "user_statuses"
	ResTeams        = "teams"
)

// Config is the poller's part of the service configuration.
type Config struct {
	Account string
	Prefix  string // subject prefix
	// Intervals are the target intervals per resource; a resource without one is
	// not polled.
	Intervals map[string]time.Duration
	// Priorities decide which intervals stretch first when the budget is short
	// (higher keeps its target longer). Defaults: calls 100, users 80, call_metrics
	// 60, teams 20, user_statuses 10.
	Priorities map[string]int
	// CallsOverlap is how far before the newest created_time seen each calls read
	// starts again [30m]: for calls that reach the API late, and so that calls that
	// ended recently are re-read (field note 4: recordings, notes and transcriptions
	// arrive after the end). It costs nothing while it holds under 1000 calls: one
	// page either way.
	CallsOverlap time.Duration
	// Backfill is how far back the very first calls read goes; required (the
	// setting calls_backfill_hours, whose default is declared in config).
	Backfill time.Duration
	// MetricsLookback is how far back metrics are read each time; calls still
	// waiting for their final metric extend it. Required (the setting
	// metrics_lookback_minutes).
	MetricsLookback time.Duration
	// MaxWindow bounds a list window when only a few open calls are older than
	// that: they are read one by one instead [6h].
	MaxWindow time.Duration
	// GiveUpAfter is how long after its start a call may stay open (not ended, or
	// ended without a final metric) before the poller stops looking at it [48h].
	GiveUpAfter time.Duration
	// RateWindow is the API's rate-limit window [1m]; the limiter's budget is per
	// window.
	RateWindow time.Duration
	// IntervalFloor is the shortest interval a resource's interval shrinks to
	// when the budget has room beyond every target (Allocate), in priority order;
	// 0: intervals never go below their targets. The setting
	// poll_interval_floor_seconds.
	IntervalFloor time.Duration
	// PerPage is the page size of list reads [1000, the maximum: a page costs one
	// request whatever its size].
	PerPage int
	// OutboxMax pauses polling while the outbox holds this many events (a long
	// NATS outage): Redis memory stays bounded and nothing is dropped. 0: no limit.
	OutboxMax int64
	// EventVersions says which versions of a type with several are published
	// (the setting event_versions; "" is event.VersionsAll). See event.Versions.
	EventVersions event.VersionChoice
	// Policy is the account's data policy (nil: none): the client has applied
	// its field actions to the records already (callcenter.WithRedactor); the
	// poller publishes only the event types it wants, stamps events with its
	// version, and re-baselines silently when the version differs from the one
	// the state was written under (policy.go).
	Policy *policy.Policy
	// WatermarkInterval is how often Run commits the account's watermark
	// (watermark.go); 0: no watermarks. The setting watermark_interval_seconds.
	WatermarkInterval time.Duration
}

// defaults fills the tuning fields that have no setting; the fields that come from
// settings have their defaults in config/iparams.json only, and New refuses them
// unset rather than repeat those defaults here.
func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.CallsOverlap, 30*time.Minute)
	set(&c.MaxWindow, 6*time.Hour)
	set(&c.GiveUpAfter, 48*time.Hour)
	set(&c.RateWindow, time.Minute)
	if c.PerPage <= 0 {
		c.PerPage = callcenter.MaxPerPage
	}
	if c.Priorities == nil {
		c.Priorities = map[string]int{ResCalls: 100, ResUsers: 80, ResMetrics: 60, ResTeams: 20, ResUserStatuses: 10}
	}
}

// Poller runs poll cycles for one account while it holds the lease. It is not safe
// for concurrent use: one goroutine calls Run.
type Poller struct {
	cfg   Config
	api   *callcenter.Client
	store Store
	log   zerolog.Logger

	tracer            trace.Tracer
	wake              func() // tells the relay that events were committed
	cycleObservers    []CycleObserver
	intervalObservers []func(context.Context, map[string]time.Duration)

	lease   func() cursor.Lease
	scope   diff.Scope // account and state epoch, set by Run
	history bool       // events get the history attribute (history.go)
	// versions are the versions published beside each type's current one:
	// event.Published unless WithVersions.
	versions map[events.Type][]event.Version
	enc      *event.Encoder // the subjects of cfg.Prefix and Account, made once

	names     diff.StatusNames
	hasNames  bool
	clock     apiClock  // the API's present when it runs ahead of ours (a simulator)
	reads     openReads // the schedule of the open calls' single reads
	mu        sync.Mutex
	effective map[string]time.Duration

	ops       Ops        // notes for poller state, operators' requests (requests.go)
	between   looking    // what the leader asks the store between cycles (between.go)
	unchanged unchanged  // the users and teams the last cycle diffed (unchanged.go)
	marks     marks      // the watermark's state (watermark.go)
	resync    resyncing  // resync requests and the run under way (resync.go)
	guard     stateGuard // Redis state checks: rollbacks, outbox limit, entities gone (reconcile.go)
	commits   committer  // the batch committed in the background (batch.go)
}

// New returns a poller reading api and committing to store; opts add a tracer, the
// relay's wake-up and observers. It fails on names unfit for subjects, no interval,
// and a zero Backfill or MetricsLookback; the other zero durations take the
// defaults in brackets.
func New(cfg Config, api *callcenter.Client, store Store, log zerolog.Logger, opts ...Option) (*Poller, error) {
	cfg.defaults()
	if err := events.CheckNames(cfg.Prefix, cfg.Account); err != nil {
		return nil, fmt.Errorf("poller: %w", err)
	}
	if len(cfg.Intervals) == 0 {
		return nil, errors.New("poller: no resource to poll")
	}
	if cfg.Backfill <= 0 || cfg.MetricsLookback <= 0 {
		return nil, fmt.Errorf("poller: Backfill (%s) and MetricsLookback (%s) must be positive", cfg.Backfill, cfg.MetricsLookback)
	}
	p := &Poller{cfg: cfg, api: api, store: store, log: log,
		tracer: noop.NewTracerProvider().Tracer(""), wake: func() {}, versions: event.Published,
		enc: event.NewEncoder(cfg.Prefix, cfg.Account)}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Effective returns the current effective interval of each resource.
func (p *Poller) Effective() map[string]time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]time.Duration, len(p.effective))
	for k, v := range p.effective {
		out[k] = v
	}
	return out
}

// outboxEntries appends to dst what the store keeps for the relay of an event:
// its message, one per version of its type published (event.Versions: one but
// during a deprecation window), with trace, the trace context of the cycle that
// found it (telemetry.Inject; the relay's publish span continues it), shared by
// the entries of a batcher and read only.
func (p *Poller) outboxEntries(dst []event.Message, e events.Envelope, trace map[string]string) ([]event.Message, error) {
	e.History, e.Policy = p.history, p.cfg.Policy.Version()
	if len(p.versions[e.Type]) == 0 { // one version, as event.Versions would say, without its list
		m, err := p.enc.Encode(e)
		if err != nil {
			return dst, err
		}
		m.Headers = trace
		return append(dst, m), nil
	}
	envs, err := event.Versions(e, p.versions, p.cfg.EventVersions)
	if err != nil {
		return dst, err
	}
	for _, e := range envs {
		m, err := p.enc.Encode(e)
		if err != nil {
			return dst, err
		}
		m.Headers = trace
		dst = append(dst, m)
	}
	return dst, nil
}

func (p *Poller) committed(b cursor.Batch) {
	if len(b.Events) == 0 {
		return
	}
	p.wake()
}

// now is the poller's idea of the API's present: the wall clock, or when later
// the time several calls agree the API has reached (see apiClock) or the API's
// own Date headers (callcenter.Client.ServerTime), a simulator at high speed.
// No single record moves it, so neither the calls high water, the prune
// horizon, the window ends nor the give-up horizon follow a lying one; a Date
// beyond maxAhead is ignored as broken.
func (p *Poller) now() time.Time {
	wall := time.Now().UTC()
	now := maxTime(wall, p.clock.present())
	if st := p.api.ServerTime(); st.Before(wall.Add(maxAhead)) {
		now = maxTime(now, st.UTC())
	}
	return now
}

// saw records a time the API gave for call id (see apiClock).
func (p *Poller) saw(id int64, t time.Time) { p.clock.saw(id, t, time.Now()) }

// fastWorld is how far the API's present must run ahead of the wall clock for
// the poller to take it for a world at speed (a simulator), whose present it
// knows only as of the last response.
const fastWorld = 2 * time.Second

// windowEnd is the `to` of list windows: the end of the poller's present second
// (by_time goes to the second and its `to` is exclusive: a record created in the
// present second is listed), never further, so that a window cut in pieces
// (callcenter's CallsSince) spends no request on pieces that hold nothing yet. A
// record created since, or dated ahead by the API, is listed by a later window
// (they start from the high water less an overlap, or a look-back, never from
// the last window's end). Before a response told the API's present, and in a
// world at speed (fastWorld), whose present moves on between two requests,
// windows reach maxAhead past the present instead, as they did before.
func (p *Poller) windowEnd() time.Time {
	now, wall := p.now(), time.Now()
	if st := p.api.ServerTime(); st.IsZero() || now.Sub(wall) > fastWorld || st.Sub(wall) > fastWorld {
		return now.Add(maxAhead) // the API's present unknown yet, or ahead
	}
	return now.Truncate(time.Second).Add(time.Second)
}

// loadEpoch reads the state's epoch, or starts a new one when the store holds no
// state (first start, or a Redis that lost its data): see diff.Scope.
func (p *Poller) loadEpoch(ctx context.Context) error {
	cur, err := p.store.Cursors(ctx)
	if err != nil {
		return fmt.Errorf("read cursors: %w", err)
	}
	epoch := cur[cursorEpoch]
	if epoch == "" {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("new epoch: %w", err)
		}
		epoch = hex.EncodeToString(b[:])
		bt := p.newBatcher(ctx)
		bt.cursor(cursorEpoch, epoch)
		bt.cursor(cursorPolicy, storedPolicy(p.cfg.Policy)) // a fresh state is written under it
		if err := bt.flush(); err != nil {
			return fmt.Errorf("store the new epoch: %w", err)
		}
		if len(cur) > 0 {
			p.log.Warn().Str("epoch", epoch).Msg("the store had cursors but no epoch: state restarted")
		} else {
			p.log.Info().Str("epoch", epoch).Msg("no state yet: starting epoch")
		}
	}
	p.scope = diff.Scope{Account: p.cfg.Account, Epoch: epoch}
	if cur[cursorEpoch] != "" {
		return p.checkPolicy(ctx, cur[cursorPolicy])
	}
	return nil
}
