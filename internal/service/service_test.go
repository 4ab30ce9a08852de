package service

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/callbus/callbus/schemas"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

const testKey = "test-admin-key-5f2c9a"

// newWorld is the tests' simulated world: seed 7, ten agents, three calls a
// minute, changed by tweak.
func newWorld(t *testing.T, tweak func(*sim.Config)) *simtest.World {
	t.Helper()
	cfg := sim.Config{Seed: 7, Agents: 10, CallRate: 3, APIKey: testKey}
	if tweak != nil {
		tweak(&cfg)
	}
	return simtest.NewWorld(t, cfg)
}

// settings for a fast test run against w.
func testSettings(w *simtest.World, natsURL, redisURL, instance string) config.Settings {
	fast := 40 * time.Millisecond
	return config.Settings{
		APIURL: w.URL, APIKey: secret.New(testKey), APITimeout: 10 * time.Second, Account: "acme",
		NATSURL: natsURL, RedisURL: redisURL,
		SubjectPrefix: "callcenter", StreamName: "CALLCENTER", StreamMaxAge: time.Hour, StreamDuplicates: 2 * time.Minute, StreamReplicas: 1,
		RateLimitShare: 1,
		CallsInterval:  fast, OpenCallsInterval: fast, MetricsInterval: fast, MetricsLookback: 2 * time.Hour,
		UsersInterval: fast, TeamsInterval: fast, UserStatusesInterval: time.Second,
		CallsBackfill: 24 * time.Hour,
		Resources:     []string{poll.ResCalls, poll.ResMetrics, poll.ResUsers, poll.ResUserStatuses, poll.ResTeams},
		LogLevel:      "warn", HTTPAddr: "127.0.0.1:0", LeaseTTL: 2 * time.Second, InstanceID: instance,
		ShutdownTimeout: 5 * time.Second,
	}
}

// cycles counts completed poll cycles per resource.
type cycles struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *cycles) hook(_ context.Context, res string, _ time.Duration, _ int, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	c.n[res]++
	c.mu.Unlock()
}

func (c *cycles) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// running is a service under test, counting its poll cycles.
type running struct {
	cycles *cycles
	world  *simtest.World
	cancel context.CancelFunc
	done   chan error
}

// start runs the service with set, logging to log, until stop or the test's end.
func start(t *testing.T, w *simtest.World, set config.Settings, log zerolog.Logger, opts ...Option) *running {
	t.Helper()
	r := &running{cycles: &cycles{n: map[string]int{}}, world: w, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	opts = append(opts, WithPollOptions(poll.WithCycleObserver(r.cycles.hook)))
	go func() { r.done <- Run(ctx, set, log, opts...) }()
	return r
}

// advance moves the world by steps of ten simulated seconds, each after a calls
// cycle of the service.
func (r *running) advance(t *testing.T, steps int) {
	t.Helper()
	for range steps {
		n := r.cycles.snapshot()[poll.ResCalls]
		simtest.WaitFor(t, 60*time.Second, "a calls cycle", func() bool { return r.cycles.snapshot()[poll.ResCalls] > n })
		r.world.Sim.Advance(10 * time.Second)
	}
}

// stop shuts the service down and fails the test if Run returned an error.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("service: %v", err)
	}
}

// caughtUp waits until every resource has completed two cycles after now and the
// outbox is empty: the stream then reflects the (frozen) world.
func caughtUp(t *testing.T, c *cycles, store *cursor.Store) {
	t.Helper()
	base := c.snapshot()
	var last string
	defer func() {
		if t.Failed() {
			t.Logf("at the deadline: %s (cycles before: %v)", last, base)
		}
	}()
	simtest.WaitFor(t, 60*time.Second, "the poller to catch up", func() bool {
		now := c.snapshot()
		for _, res := range []string{poll.ResCalls, poll.ResMetrics, poll.ResUsers, poll.ResTeams} {
			if now[res] < base[res]+2 {
				last = fmt.Sprintf("cycles %v", now)
				return false
			}
		}
		n, err := store.OutboxLen(t.Context())
		last = fmt.Sprintf("cycles %v, outbox %d (%v)", now, n, err)
		return err == nil && n == 0
	})
}

// readStream returns every message of the stream.
func readStream(t *testing.T, ns *natstest.Server) []audit.Message {
	t.Helper()
	js, err := jetstream.New(ns.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := audit.ReadStream(t.Context(), js, "CALLCENTER")
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// auditStream audits the stream against the world's truth. partial says that the
// world's backlog reaches further back than the poller's first calls window: the
// stream then lacks the oldest calls, and must hold every call from its oldest on.
func auditStream(t *testing.T, ns *natstest.Server, w *simtest.World, partial bool) *audit.Report {
	t.Helper()
	msgs := readStream(t, ns)
	r := audit.Check(msgs, "callcenter")
	r.CompareTruth(w.ReadTruth(t))
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	r.Problems = append(r.Problems, audit.ValidateSchemas(msgs, v)...)
	// The backlog writes no truth lines: count it.
	st := w.Sim.Stats()
	skipped := 0
	if partial {
		skipped = olderThanStream(r, st.Calls)
		if skipped <= 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("the stream holds %d of %d calls: the backlog should reach before the first window", len(r.Created), st.Calls))
		}
	}
	r.CompareCounts(st.Calls-skipped, st.CallsEnded-skipped, st.MetricsFinalized-skipped)
	return r
}

// olderThanStream counts the world's calls created before the stream's oldest
// call (ids grow with created_time; backlog calls have ended and have a final
// metric). It is exact when the stream holds every call from its oldest on, which
// the count check of auditStream then asserts.
func olderThanStream(r *audit.Report, calls int) int {
	lo, hi := int64(0), int64(0)
	for id := range r.Created {
		if lo == 0 || id < lo {
			lo = id
		}
		hi = max(hi, id)
	}
	if lo == 0 {
		return 0
	}
	return calls - int(hi-lo+1)
}

func TestEndToEndAgainstTruth(t *testing.T) {
	cases := []struct {
		name  string
		tweak func(*sim.Config)
		// backfill, when set, is the first calls window's reach (default 24h);
		// the backlog then reaches further back and the stream lacks its oldest
		// calls.
		backfill time.Duration
		// fallback: /calls ignores by_time and the poller must notice.
		fallback bool
	}{
		{name: "newest first"},
		{name: "oldest first", tweak: func(c *sim.Config) { c.Order = sim.OldestFirst }},
		{name: "random order", tweak: func(c *sim.Config) { c.Order = sim.RandomOrder }},
		// A backlog of about 3h20m (ending an hour before the start) against a
		// first window of 3h: /calls shows records outside by_time at once.
		{name: "calls ignore by_time", tweak: func(c *sim.Config) { c.CallsIgnoreByTime = true; c.Order = sim.RandomOrder; c.Backlog = 600 },
			backfill: 3 * time.Hour, fallback: true},
		// Windows of several pages in a list that reshuffles on every request.
		{name: "random order, backlog of many pages", tweak: func(c *sim.Config) { c.Order = sim.RandomOrder; c.Backlog = 1500 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { againstTruth(t, tc.tweak, tc.backfill, tc.fallback) })
	}
}

// againstTruth runs the service over twenty simulated minutes of a world changed by
// tweak and audits the stream against the world's truth. backfill (0: the
// default) is the first calls window's reach; fallback says the by_time fallback
// must run.
func againstTruth(t *testing.T, tweak func(*sim.Config), backfill time.Duration, fallback bool) {
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	w := newWorld(t, tweak)
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	set := testSettings(w, ns.URL(), rs.URL, "test-1")
	if backfill != 0 {
		set.CallsBackfill = backfill
	}
	logs := &simtest.Buffer{}
	svc := start(t, w, set, zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), logs)).Level(zerolog.WarnLevel))
	svc.advance(t, 120) // twenty simulated minutes
	caughtUp(t, svc.cycles, store)
	svc.stop(t)
	if ran := bytes.Contains(logs.Bytes(), []byte("ignores by_time")); ran != fallback {
		t.Errorf("the by_time fallback ran: %v, want %v", ran, fallback)
	}
	r := auditStream(t, ns, w, backfill != 0)
	for _, p := range r.Problems {
		t.Error(p)
	}
	t.Logf("%d messages: %v", r.Messages, r.ByType)
	if st := w.Sim.Stats(); st.CallsEnded == 0 || r.ByType["metric.finalized"] == 0 || r.ByType["participant.status_changed"] == 0 || r.ByType["user.status_changed"] == 0 {
		t.Fatalf("the world did too little to test: %+v, %v", st, r.ByType)
	}
}
