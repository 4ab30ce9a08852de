package sim

import (
	"math"
	"math/rand/v2"
)

// Id bases keep the id spaces of different entities apart, so a client that mixes
// them up (a participant id used as a call id) gets a 404 rather than a wrong record.
const (
	callBase   = 1_000_001
	partBase   = 10_000_001
	metricBase = 50_000_001
	recBase    = 70_000_001
	custBase   = 300_001
	callerBase = 9_000_000 // caller_id = callerBase + customer id
	customers  = 5000      // size of the customer pool
)

// world is the simulated account: every entity and the schedule that moves them.
// It is not safe for concurrent use; Sim serializes access with its mutex.
type world struct {
	cfg   Config
	rng   *rand.Rand
	now   sec
	start sec
	sched schedule
	truth *truthLog

	statuses []userStatus
	users    []*user // id = index+1
	teams    []*team // id = index+1
	queues   []*queue
	ivrs     []*ivr
	numbers  []*phoneNumber
	calls    []*call // id = callBase+index; sorted by created time
	jobs     []*job  // id = index+1
	hist     history // lazily generated calls before the backlog (Config.History)
	recs     map[int64]*call

	nextPart, nextRec int64
	arrivalAt         float64 // seconds after start of the last arrival
	bigCall           int64   // the call given Hostile.BigCall's legs; 0: none yet
	ended, finalized  int
}

// newWorld builds the account at cfg.Start (already resolved by New) and its
// initial schedule. cfg must have its defaults filled.
func newWorld(cfg Config, start sec, truth *truthLog) *world {
	w := &world{
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x5eed_ca11)),
		now:      start,
		start:    start,
		truth:    truth,
		statuses: defaultStatuses(),
		recs:     make(map[int64]*call),
		nextPart: partBase,
		nextRec:  recBase,
	}
	w.genUsers(cfg.Agents)
	w.genTeams(cfg.Teams)
	if cfg.Backlog > 0 {
		w.genBacklog(cfg.Backlog)
	}
	// History ends where the backlog begins (an hour before the start without one).
	end := start - 3600
	if len(w.calls) > 0 {
		end = w.calls[0].created - 1
	}
	w.hist = newHistory(cfg.History, int64(cfg.HistorySpan.Seconds()), cfg.CallRate, end)
	for _, u := range w.users {
		w.scheduleFlip(u)
		w.scheduleMobileFlip(u)
	}
	w.scheduleArrival()
	return w
}

// advance runs every action due up to now, in time order, then sets the world's
// time to now. Times never go back.
func (w *world) advance(now sec) {
	for {
		a, ok := w.sched.popDue(now)
		if !ok {
			break
		}
		if a.at > w.now {
			w.now = a.at
		}
		a.fn()
	}
	if now > w.now {
		w.now = now
	}
}

// after schedules fn d simulated seconds from now.
func (w *world) after(d int64, fn func()) {
	if d < 0 {
		d = 0
	}
	w.sched.push(w.now+sec(d), fn)
}

// between returns a uniform integer in [lo, hi].
func (w *world) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + w.rng.Int64N(hi-lo+1)
}

// chance returns true with probability p.
func (w *world) chance(p float64) bool { return w.rng.Float64() < p }

// expSec draws an exponential duration with the given mean, in whole seconds, at
// least lo.
func (w *world) expSec(mean float64, lo int64) int64 {
	d := int64(math.Round(w.rng.ExpFloat64() * mean))
	if d < lo {
		d = lo
	}
	return d
}

// pick returns a uniformly chosen index below n.
func (w *world) pick(n int) int { return w.rng.IntN(n) }

// call returns the call with id, or nil.
func (w *world) call(id int64) *call {
	i := id - callBase
	if i < 0 || i >= int64(len(w.calls)) {
		return nil
	}
	return w.calls[i]
}

// user returns the user with id, or nil.
func (w *world) user(id int64) *user {
	if id < 1 || id > int64(len(w.users)) {
		return nil
	}
	return w.users[id-1]
}

// team returns the team with id, or nil.
func (w *world) team(id int64) *team {
	if id < 1 || id > int64(len(w.teams)) {
		return nil
	}
	return w.teams[id-1]
}
