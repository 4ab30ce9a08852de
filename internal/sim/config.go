package sim

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Roles a user (and so an API key) can have; the spec's User.role values.
const (
	RoleAccountAdmin = "Account Admin"
	RoleAdmin        = "Admin"
	RoleSupervisor   = "Supervisor"
	RoleAgent        = "Agent"
)

// validRole reports whether r is one of the four spec roles (exact spelling).
func validRole(r string) bool {
	switch r {
	case RoleAccountAdmin, RoleAdmin, RoleSupervisor, RoleAgent:
		return true
	}
	return false
}

// Order is the order of every list response.
type Order int

// List orders. NewestFirst is the zero value and the default.
const (
	NewestFirst Order = iota // highest id (latest created) first
	OldestFirst              // lowest id first
	RandomOrder              // a fresh shuffle per request, to shake out order-dependent clients
)

// ParseOrder parses "newest", "oldest" or "random".
func ParseOrder(s string) (Order, error) {
	switch s {
	case "newest", "":
		return NewestFirst, nil
	case "oldest":
		return OldestFirst, nil
	case "random":
		return RandomOrder, nil
	}
	return 0, fmt.Errorf("order %q: want newest, oldest or random", s)
}

// RetryAfterMode says whether a 429 carries a Retry-After header (field note 8).
type RetryAfterMode int

// Retry-After modes. RetrySometimes (the zero value) sends it on about half of the
// 429s, chosen by the seeded fault source.
const (
	RetrySometimes RetryAfterMode = iota
	RetryAlways
	RetryNever
)

// ParseRetryAfter parses "always", "never" or "sometimes".
func ParseRetryAfter(s string) (RetryAfterMode, error) {
	switch s {
	case "sometimes", "":
		return RetrySometimes, nil
	case "always":
		return RetryAlways, nil
	case "never":
		return RetryNever, nil
	}
	return 0, fmt.Errorf("retry-after %q: want always, never or sometimes", s)
}

// Key is an extra API key and the role of the user it belongs to.
type Key struct {
	Key  string
	Role string
}

// Config configures a Sim. The zero value of every field is a usable default except
// APIKey (or Keys), one of which is required.
type Config struct {
	// Seed drives every random choice of the world (calls, statuses) and, through
	// derived sources, of faults and drift.
	Seed uint64
	// Start is the simulated time at which the world begins. Zero: Clock.Now() when
	// Clock is set, else the wall clock truncated to the second.
	Start time.Time
	// Speed is simulated seconds per real second for the default clock (default 1).
	Speed float64
	// Clock gives simulated time. Nil: a ScaledClock (Start + Speed × real elapsed).
	// Tests use a ManualClock and Sim.Advance.
	Clock Clock

	// Agents is the number of users generated (default 20). User 1 is the account
	// admin; about 5% are Admins, 10% Supervisors, the rest Agents.
	Agents int
	// Teams is the number of teams, each with its own queue and number (default 4).
	Teams int
	// CallRate is the mean number of new calls per simulated minute, inbound and
	// outbound together (default 2; negative: no calls).
	CallRate float64
	// Backlog is the number of historical, ended calls (with final metrics) generated
	// before Start. They write no truth lines.
	Backlog int

	// History is the number of older ended calls (with final metrics) generated
	// lazily before the backlog, up to MaxHistory: only JSON export reports serve them
	// (lists, single reads and the truth log do not), rebuilt from their index
	// whenever a report is read, so a million cost no memory. Sim.HistoryCallIDs
	// lists them.
	History int
	// HistorySpan is how far back History reaches (0: at CallRate).
	HistorySpan time.Duration
	// ZipReports serves JSON export reports zipped ({token}.zip holding
	// report.json), as the API does for jobs that went through zip_in_progress;
	// otherwise they are plain JSON. Either way reports are streamed.
	ZipReports bool

	// APIKey belongs to the account admin (user 1).
	APIKey string
	// Keys are further keys; each is bound to a generated user of its role (a user is
	// created when none is left).
	Keys []Key

	// Plan is requests per RateWindow for the whole account: 100, 200, 400; 0 means
	// unlimited (headers still sent, with Total 1000000).
	Plan int
	// RateWindow is the fixed rate-limit window (default 1 minute), in RateClock time.
	RateWindow time.Duration
	// RateClock times rate-limit windows, latency-free faults and 429 bursts. Nil:
	// the wall clock. Rate limits are about real requests, so they never follow Speed.
	RateClock Clock
	// RetryAfter controls Retry-After on 429 responses.
	RetryAfter RetryAfterMode

	// Order is the order of list responses.
	Order Order
	// CallsIgnoreByTime makes GET /calls ignore by_time[from]/[to] (the spec lists
	// only paging for it; the real API honours the filter, field note 3).
	CallsIgnoreByTime bool
	// AllowWildcardAccept serves requests whose Accept header is only "*/*"; by
	// default they get 404, as field note 1 reports of the real API.
	AllowWildcardAccept bool

	// ErrorRate is the fraction of API requests answered 500/502/503 (JSON or HTML
	// body) without touching the world.
	ErrorRate float64
	// MalformedRate is the fraction of successful GET responses whose JSON body is
	// truncated.
	MalformedRate float64
	// Latency is added to every API request; LatencyJitter adds a uniform random
	// extra in [0, LatencyJitter).
	Latency, LatencyJitter time.Duration
	// Burst429Every starts a burst of 429s every so often (RateClock time), whatever
	// the budget; each burst lasts Burst429Length (default 2s). Zero: no bursts.
	Burst429Every, Burst429Length time.Duration

	// Drift is the probability with which each record (or list) uses one of the
	// field-note variants: ids as strings, "Incoming", decimal connection_type and
	// cost, life_cycle key "timestamp", the earlier call form, missing meta.
	Drift float64
	// OffsetRate is the fraction of records whose timestamps carry a non-UTC offset
	// (+01:00, -05:00, +05:30) instead of Z; same instants.
	OffsetRate float64
	// JobStallRate is the fraction of export jobs that stall in zip_in_progress
	// forever (field note 9).
	JobStallRate float64
	// JobFailRate is the fraction of export jobs that end in status "failed",
	// one the spec does not list (field note 9).
	JobFailRate float64
	// Jobs scripts how the first export jobs end, in order; later jobs follow
	// JobStallRate and JobFailRate.
	Jobs []JobOutcome
	// Reports serves hazards in JSON export reports; the zero value none.
	Reports ReportFaults

	// Hostile serves the upstream hazards of issue 12 (poison records, future
	// times, 404s on open calls, missing meta, a call over 1 MB); the zero value
	// serves none. HostileFaults is the "hostile" profile.
	Hostile Hostile

	// BaseURL, when set, prefixes absolute URLs (recording url, location, report
	// path, job links); otherwise they are built from each request's Host.
	BaseURL string

	// Truth receives the ground-truth NDJSON log (see the package doc). Buffered;
	// flushed by Close. The Sim never closes it.
	Truth io.Writer
}

// withDefaults fills zero fields and validates the rest, listing every problem.
func (c Config) withDefaults() (Config, error) {
	// The helpers run in this order so the joined error lists problems in the
	// order of the Config's fields.
	errs := worldDefaults(&c)
	errs = append(errs, limitDefaults(&c)...)
	var herrs []error
	c.Hostile, herrs = c.Hostile.withDefaults()
	errs = append(errs, herrs...)
	if c.Latency < 0 || c.LatencyJitter < 0 {
		errs = append(errs, errors.New("latency: must not be negative"))
	}
	return c, errors.Join(errs...)
}

// worldDefaults fills and checks the world's size, rate, history and keys.
func worldDefaults(c *Config) []error {
	var errs []error
	if c.Speed == 0 {
		c.Speed = 1
	}
	if c.Speed < 0 {
		errs = append(errs, fmt.Errorf("speed %v: must be positive", c.Speed))
	}
	if c.Agents == 0 {
		c.Agents = 20
	}
	if c.Agents < 1 {
		errs = append(errs, fmt.Errorf("agents %d: must be at least 1", c.Agents))
	}
	if c.Teams == 0 {
		c.Teams = 4
	}
	if c.Teams < 1 {
		errs = append(errs, fmt.Errorf("teams %d: must be at least 1", c.Teams))
	}
	if c.CallRate == 0 {
		c.CallRate = 2
	}
	if c.Backlog < 0 {
		errs = append(errs, fmt.Errorf("backlog %d: must not be negative", c.Backlog))
	}
	if c.History < 0 || c.History > MaxHistory || c.HistorySpan < 0 {
		errs = append(errs, fmt.Errorf("history %d over %v: want 0 to %d calls over a positive span", c.History, c.HistorySpan, MaxHistory))
	}
	if c.APIKey == "" && len(c.Keys) == 0 {
		errs = append(errs, errors.New("api key: required"))
	}
	for _, k := range c.Keys {
		if k.Key == "" {
			errs = append(errs, errors.New("key: empty key"))
		}
		if !validRole(k.Role) {
			errs = append(errs, fmt.Errorf("key role %q: want Account Admin, Admin, Supervisor or Agent", k.Role))
		}
	}
	return errs
}

// limitDefaults fills and checks the rate limit, the 429 bursts and the fault
// rates.
func limitDefaults(c *Config) []error {
	var errs []error
	if c.Plan < 0 {
		errs = append(errs, fmt.Errorf("plan %d: must be 0 (unlimited) or positive", c.Plan))
	}
	if c.RateWindow == 0 {
		c.RateWindow = time.Minute
	}
	if c.RateWindow < 0 {
		errs = append(errs, fmt.Errorf("rate window %v: must be positive", c.RateWindow))
	}
	if c.Burst429Every > 0 && c.Burst429Length == 0 {
		c.Burst429Length = 2 * time.Second
	}
	for _, r := range []struct {
		name string
		v    float64
	}{
		{"error rate", c.ErrorRate}, {"malformed rate", c.MalformedRate}, {"drift", c.Drift},
		{"offset rate", c.OffsetRate},
	} {
		if r.v < 0 || r.v > 1 {
			errs = append(errs, fmt.Errorf("%s %v: must be within [0, 1]", r.name, r.v))
		}
	}
	return append(errs, checkJobs(c)...)
}
