package sim

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// ErrNotFound is returned for an unknown entity.
var ErrNotFound = errors.New("sim: not found")

// Sim is a simulated call-center account and its REST API. All methods are safe for
// concurrent use.
type Sim struct {
	cfg       Config
	clock     Clock
	rateClock Clock
	truth     *truthLog
	keys      map[string]apiKey
	limiter   *limiter
	faults    *faults
	handler   http.Handler
	// prefix is the path the account is served under (Accounts), part of the
	// absolute URLs it hands out; "" when served at the root.
	prefix string

	mu     sync.Mutex // guards w, shapes and jobs' report rendering
	w      *world
	shapes *rand.Rand // drift and random list order
	// hostile serves Config.Hostile (nil when it is zero); guarded by mu.
	hostile *hostile
}

// apiKey is a key's owner.
type apiKey struct {
	userID int64
	role   string
}

// New builds the world (users, teams, backlog) at cfg.Start and returns the Sim.
// It fails when the config is invalid, listing every problem.
func New(cfg Config) (*Sim, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	clock := cfg.Clock
	start := cfg.Start
	switch {
	case clock != nil && start.IsZero():
		start = clock.Now()
	case clock == nil:
		if start.IsZero() {
			start = time.Now().Truncate(time.Second)
		}
		clock = NewScaledClock(start, cfg.Speed)
	}
	rateClock := cfg.RateClock
	if rateClock == nil {
		rateClock = wallClock{}
	}
	s := &Sim{
		cfg:       cfg,
		clock:     clock,
		rateClock: rateClock,
		truth:     newTruthLog(cfg.Truth),
		keys:      map[string]apiKey{},
		shapes:    rand.New(rand.NewPCG(cfg.Seed, 0xd21f7)),
	}
	s.limiter = newLimiter(cfg, rateClock)
	s.faults = newFaults(cfg)
	if cfg.Hostile.any() {
		s.hostile = newHostile(cfg.Hostile, cfg.Seed)
	}
	s.w = newWorld(cfg, toSec(start), s.truth)
	s.bindKeys()
	s.handler = s.routes()
	return s, nil
}

// bindKeys gives the account admin key to user 1 and each extra key to a distinct
// user of its role, creating one when none is left.
func (s *Sim) bindKeys() {
	w := s.w
	bound := map[int64]bool{}
	if s.cfg.APIKey != "" {
		s.keys[s.cfg.APIKey] = apiKey{userID: 1, role: RoleAccountAdmin}
		bound[1] = true
	}
	for _, k := range s.cfg.Keys {
		var owner *user
		for _, u := range w.users {
			if u.role == k.Role && !bound[u.id] {
				owner = u
				break
			}
		}
		if owner == nil {
			owner = w.genUser(k.Role)
			w.scheduleFlip(owner)
			w.scheduleMobileFlip(owner)
		}
		bound[owner.id] = true
		s.keys[k.Key] = apiKey{userID: owner.id, role: k.Role}
	}
}

// syncLocked runs the world up to the clock's time and returns it. s.mu must be held.
func (s *Sim) syncLocked() *world {
	s.w.advance(toSec(s.clock.Now()))
	return s.w
}

// Handler returns the HTTP API (under /api/v1) and the download URLs it hands out
// (/recordings/, /reports/).
func (s *Sim) Handler() http.Handler { return s.handler }

// Now returns the current simulated time.
func (s *Sim) Now() time.Time { return s.clock.Now() }

// Start returns the simulated time at which the world began.
func (s *Sim) Start() time.Time { return s.w.start.Time() }

// Advance moves the clock forward by d and runs every action due. It panics if the
// Config's Clock cannot be advanced (ManualClock and ScaledClock can).
func (s *Sim) Advance(d time.Duration) {
	a, ok := s.clock.(advancer)
	if !ok {
		panic("sim: Advance needs a ManualClock or ScaledClock")
	}
	a.Advance(d)
	s.mu.Lock()
	s.syncLocked()
	s.mu.Unlock()
}

// Sync runs every action due up to the clock's current time; requests do it
// implicitly. A caller with a real clock may call it periodically so the truth log
// keeps up with time when no requests arrive.
func (s *Sim) Sync() {
	s.mu.Lock()
	s.syncLocked()
	s.mu.Unlock()
}

// Close runs the world up to now and flushes the truth log, returning its first
// write error. The Sim stays usable; Close may be called again.
func (s *Sim) Close() error {
	s.Sync()
	return s.truth.flush()
}

// Stats counts the world's entities.
type Stats struct {
	Users, Teams      int
	Calls, CallsEnded int // Calls includes backlog and child calls
	MetricsFinalized  int
	Jobs              int
	Pending           int // scheduled actions
}

// HiddenParticipants are the participants the hostile profile left out of some
// read of their call (Hostile.VanishRate), in no order: their statuses after that
// read never reached the API's answers.
func (s *Sim) HiddenParticipants() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hostile == nil {
		return nil
	}
	out := make([]int64, 0, len(s.hostile.hidden))
	for id := range s.hostile.hidden {
		out = append(out, id)
	}
	return out
}

// Stats returns counts after running the world up to now.
func (s *Sim) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.syncLocked()
	return Stats{Users: len(w.users), Teams: len(w.teams), Calls: len(w.calls), CallsEnded: w.ended,
		MetricsFinalized: w.finalized, Jobs: len(w.jobs), Pending: w.sched.len()}
}

// UserIDs returns every user id, ascending.
func (s *Sim) UserIDs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, len(s.w.users))
	for i, u := range s.w.users {
		ids[i] = u.id
	}
	return ids
}

// ChildCalls returns the ids of the calls whose parent_call_id or root_call_id is
// callID, ascending.
func (s *Sim) ChildCalls(callID int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.syncLocked()
	var ids []int64
	c := w.call(callID)
	if c == nil {
		return nil
	}
	for _, o := range w.calls[c.id-callBase+1:] {
		if o.parent == callID || o.root == callID {
			ids = append(ids, o.id)
		}
	}
	return ids
}
