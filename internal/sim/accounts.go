package sim

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// AccountPrefix starts the path of every account an Accounts serves: account NAME
// answers under /a/NAME/, its API at /a/NAME/api/v1 (a base URL the API client
// takes as it is: it appends /api/v1 to any path).
const AccountPrefix = "/a/"

// AccountsConfig configures an Accounts.
type AccountsConfig struct {
	// Names are the accounts, each a NATS subject token ([A-Za-z0-9_-]+), distinct.
	Names []string
	// Config returns the configuration of account i (Names[i]). Its Clock and Start
	// are replaced by the shared ones and its Truth by Truth's writer, so worlds
	// built at different moments are the same world.
	Config func(i int, name string) Config
	// Clock is the clock all accounts share (nil: a ScaledClock at Start running
	// at Speed). Start is the simulated time every world begins at (zero:
	// Clock.Now(), or the wall clock truncated to the second).
	Clock Clock
	Start time.Time
	Speed float64
	// Truth opens the truth log of an account when its world is built (nil: none).
	// A writer that is also an io.Closer is closed by Accounts.Close.
	Truth func(name string) (io.Writer, error)
}

// Accounts serves many independent simulated accounts from one handler: each has
// its own world (seed), keys, rate limit and truth log; they share one clock. A
// world is built on the first request to its account (or by Sim), from the shared
// start time, so an account no one asks for costs its Config and nothing else,
// and the world is the same whenever it is built. Safe for concurrent use.
type Accounts struct {
	names   []string
	index   map[string]int
	cfg     func(int, string) Config
	clock   Clock
	start   time.Time
	truth   func(string) (io.Writer, error)
	handler http.Handler

	mu      sync.Mutex
	sims    map[string]*Sim
	closers []io.Closer
}

// accountName is what an account name may be: a NATS subject token.
var accountName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// AccountNames returns n names acct001, acct002, …, acct999, acct1000, ….
func AccountNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("acct%03d", i+1)
	}
	return out
}

// NewAccounts checks every account's name and Config (listing every problem) and
// returns the Accounts; no world is built yet.
func NewAccounts(c AccountsConfig) (*Accounts, error) {
	a := &Accounts{names: c.Names, index: map[string]int{}, cfg: c.Config, truth: c.Truth, sims: map[string]*Sim{}}
	if len(c.Names) == 0 || c.Config == nil {
		return nil, errors.New("sim accounts: want names and a Config function")
	}
	a.clock, a.start = sharedClock(c)
	var errs []error
	for i, n := range c.Names {
		if !accountName.MatchString(n) {
			errs = append(errs, fmt.Errorf("account %q: want letters, digits, - or _", n))
		}
		if _, dup := a.index[n]; dup {
			errs = append(errs, fmt.Errorf("account %q: listed twice", n))
		}
		a.index[n] = i
		if _, err := a.config(i, n).withDefaults(); err != nil {
			errs = append(errs, fmt.Errorf("account %q: %w", n, err))
		}
	}
	a.handler = http.HandlerFunc(a.serve)
	return a, errors.Join(errs...)
}

// sharedClock is the clock and start of c's worlds.
func sharedClock(c AccountsConfig) (Clock, time.Time) {
	start := c.Start
	if c.Clock != nil {
		if start.IsZero() {
			start = c.Clock.Now()
		}
		return c.Clock, start
	}
	if start.IsZero() {
		start = time.Now().Truncate(time.Second)
	}
	speed := c.Speed
	if speed == 0 {
		speed = 1
	}
	return NewScaledClock(start, speed), start
}

// config is account i's Config on the shared clock and start.
func (a *Accounts) config(i int, name string) Config {
	cfg := a.cfg(i, name)
	cfg.Clock, cfg.Start, cfg.Truth = a.clock, a.start, nil
	return cfg
}

// Names returns the accounts, in the order given.
func (a *Accounts) Names() []string { return a.names }

// Clock returns the clock the accounts share.
func (a *Accounts) Clock() Clock { return a.clock }

// Handler serves account NAME under /a/NAME/ (see AccountPrefix); any other path,
// or an unknown account, gets the API's JSON 404.
func (a *Accounts) Handler() http.Handler { return a.handler }

func (a *Accounts) serve(rw http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, AccountPrefix)
	name, _, _ := strings.Cut(rest, "/")
	if _, known := a.index[name]; !ok || !known {
		notFound(rw, r)
		return
	}
	s, err := a.Sim(name)
	if err != nil {
		http.Error(rw, "simulator: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.StripPrefix(AccountPrefix+name, s.Handler()).ServeHTTP(rw, r)
}

// notFound answers as the API does for a path it does not know.
func notFound(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "application/json; charset=utf-8")
	rw.WriteHeader(http.StatusNotFound)
	_, _ = fmt.Fprintf(rw, `{"error_type":"not_found","message":%q,"errors":[]}`, "No account at "+r.URL.Path)
}

// Sim returns account name's simulator, building its world (from the shared
// start, up to now) on first use.
func (a *Accounts) Sim(name string) (*Sim, error) {
	i, ok := a.index[name]
	if !ok {
		return nil, fmt.Errorf("sim accounts: no account %q", name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sims[name]; s != nil {
		return s, nil
	}
	cfg := a.config(i, name)
	if a.truth != nil {
		w, err := a.truth(name)
		if err != nil {
			return nil, fmt.Errorf("account %s: truth log: %w", name, err)
		}
		if c, ok := w.(io.Closer); ok {
			a.closers = append(a.closers, c)
		}
		cfg.Truth = w
	}
	s, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", name, err)
	}
	s.prefix = AccountPrefix + name
	a.sims[name] = s
	return s, nil
}

// built returns the simulators built so far.
func (a *Accounts) built() []*Sim {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*Sim, 0, len(a.sims))
	for _, s := range a.sims {
		out = append(out, s)
	}
	return out
}

// Built reports how many worlds have been built.
func (a *Accounts) Built() int { return len(a.built()) }

// Sync runs every built world up to the clock (see Sim.Sync).
func (a *Accounts) Sync() {
	for _, s := range a.built() {
		s.Sync()
	}
}

// Close runs every built world up to now and flushes its truth log, then closes
// the truth writers Truth opened. It returns the first error; worlds never built
// have no truth log (nothing of theirs was served).
func (a *Accounts) Close() error {
	var errs []error
	for _, s := range a.built() {
		errs = append(errs, s.Close())
	}
	a.mu.Lock()
	closers := a.closers
	a.closers = nil
	a.mu.Unlock()
	for _, c := range closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
