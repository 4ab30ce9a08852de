package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// options is the parsed command line.
type options struct {
	cfg       sim.Config
	addr      string
	truthPath string
	tick      time.Duration
	// accounts and truthDir serve many accounts (see accounts.go); accounts is
	// "" for the single account.
	accounts, truthDir string
	// otherClient is requests per rate window another integration of the
	// account spends (Sim.OtherClient).
	otherClient int
}

// parseFlags turns args into options, listing every problem at once.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("callcenter-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	r := &rawFlags{callsByTime: true}
	worldFlags(fs, &o, r)
	limitFlags(fs, &o.cfg, r)
	faultFlags(fs, &o.cfg, r)
	hostileFlags(fs, r)
	serveFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	// resolveFlags completes o.cfg, so it runs before o is returned.
	err := resolveFlags(fs, &o.cfg, r, getenv)
	return o, err
}

// rawFlags holds the flag values that are parsed or checked after fs.Parse
// rather than written straight into the config.
type rawFlags struct {
	start, order, retryAfter, keysFile, faults string
	h                                          sim.Hostile
	callsByTime                                bool
}

// worldFlags declares the flags for the API keys and the generated world.
func worldFlags(fs *flag.FlagSet, o *options, r *rawFlags) {
	c := &o.cfg
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&c.APIKey, "api-key", "", "the account admin's API key (required; or CALLCENTER_SIM_API_KEY)")
	fs.Func("key", "extra API key as KEY=ROLE (Account Admin, Admin, Supervisor, Agent); repeatable", func(v string) error {
		k, role, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return errors.New("want KEY=ROLE")
		}
		c.Keys = append(c.Keys, sim.Key{Key: k, Role: role})
		return nil
	})
	fs.StringVar(&r.keysFile, "keys-file", "", `JSON file of extra keys: {"KEY": "ROLE", ...}`)
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the world, faults and drift")
	fs.Float64Var(&c.Speed, "speed", 1, "simulated seconds per real second")
	fs.StringVar(&r.start, "start", "", "simulated start time, RFC 3339 (default: now, truncated to the second)")
	fs.IntVar(&c.Agents, "agents", 20, "number of users")
	fs.IntVar(&c.Teams, "teams", 4, "number of teams (each with a queue and a number)")
	fs.Float64Var(&c.CallRate, "call-rate", 2, "new calls per simulated minute (negative: none)")
	fs.IntVar(&c.Backlog, "backlog", 0, "historical ended calls generated before the start")
	fs.IntVar(&c.History, "history", 0, "older ended calls, generated lazily, served only by export reports")
	fs.DurationVar(&c.HistorySpan, "history-span", 0, "how far back -history reaches (0: at -call-rate)")
	fs.BoolVar(&c.ZipReports, "zip-reports", false, "serve JSON export reports zipped")
}

// limitFlags declares the rate-limit and list-behaviour flags.
func limitFlags(fs *flag.FlagSet, c *sim.Config, r *rawFlags) {
	fs.IntVar(&c.Plan, "plan", 100, "requests per rate window: 100, 200, 400, or 0 for unlimited")
	fs.DurationVar(&c.RateWindow, "rate-window", time.Minute, "rate-limit window (real time)")
	fs.StringVar(&r.retryAfter, "retry-after", "sometimes", "Retry-After on 429: always, never or sometimes")
	fs.StringVar(&r.order, "order", "newest", "list order: newest, oldest or random")
	fs.BoolVar(&r.callsByTime, "calls-by-time", true, "GET /calls honours by_time[from]/[to]")
	fs.BoolVar(&c.AllowWildcardAccept, "allow-wildcard-accept", false, "serve Accept: */* (the real API answers 404)")
}

// faultFlags declares the flags for random failures, latency and drift.
func faultFlags(fs *flag.FlagSet, c *sim.Config, r *rawFlags) {
	fs.Float64Var(&c.ErrorRate, "error-rate", 0, "fraction of requests failing with 500/502/503")
	fs.Float64Var(&c.MalformedRate, "malformed-rate", 0, "fraction of successful GETs with a truncated body")
	fs.DurationVar(&c.Latency, "latency", 0, "latency added to every request")
	fs.DurationVar(&c.LatencyJitter, "latency-jitter", 0, "random extra latency, uniform up to this")
	fs.DurationVar(&c.Burst429Every, "burst-429", 0, "start a burst of 429s this often (0: never)")
	fs.DurationVar(&c.Burst429Length, "burst-429-length", 2*time.Second, "length of each 429 burst")
	fs.Float64Var(&c.Drift, "drift", 0, "probability of each field-note variant per record")
	fs.Float64Var(&c.OffsetRate, "offset-rate", 0, "fraction of records with non-Z time offsets")
	fs.Float64Var(&c.JobStallRate, "job-stall-rate", 0, "fraction of export jobs that never complete")
	fs.Float64Var(&c.JobFailRate, "job-fail-rate", 0, "fraction of export jobs that end in status \"failed\"")
	fs.Float64Var(&c.Reports.PoisonRate, "report-poison-rate", 0, "fraction of calls served in export reports with a participant enqueued_time 0000-00-00 00:00:00")
	fs.Float64Var(&c.Reports.DuplicateRate, "report-duplicate-rate", 0, "fraction of calls listed twice in export reports (an older copy after the current one)")
	fs.BoolVar(&c.Reports.OddZip, "report-odd-zip", false, "zipped reports hold a manifest and a __MACOSX resource fork before the report")
	fs.StringVar(&r.faults, "faults", "none", "fault profile: none, or hostile (every hazard below); the flags below override it")
}

// hostileFlags declares the per-hazard flags; overrideHostile applies those set
// on top of the -faults profile.
func hostileFlags(fs *flag.FlagSet, r *rawFlags) {
	fs.Float64Var(&r.h.PoisonRate, "poison-rate", 0, "fraction of calls served undecodable or insane for their first reads")
	fs.IntVar(&r.h.PoisonReads, "poison-reads", 3, "reads a temporary hazard (poison, future times) lasts")
	fs.Float64Var(&r.h.FutureRate, "future-rate", 0, "fraction of calls served a year ahead for their first reads")
	fs.Float64Var(&r.h.NotFoundRate, "not-found-rate", 0, "fraction of calls whose single read is 404 while open")
	fs.Float64Var(&r.h.NoMetaRate, "no-meta-rate", 0, "fraction of /calls responses without meta")
	fs.Float64Var(&r.h.VanishRate, "vanish-rate", 0, "fraction of calls whose last participant stops being listed")
	fs.Float64Var(&r.h.StaleRate, "stale-rate", 0, "fraction of calls served now and then as the copy before, same updated_time")
	fs.Float64Var(&r.h.EndlessRate, "endless-rate", 0, "fraction of inbound calls that never end")
	fs.BoolVar(&r.h.BigCall, "big-call", false, "give the first inbound call over 3,200 participants (over 1 MB)")
}

// serveFlags declares the serving and output flags.
func serveFlags(fs *flag.FlagSet, o *options) {
	c := &o.cfg
	fs.StringVar(&c.BaseURL, "base-url", "", "base of absolute URLs handed out (default: from each request's Host)")
	fs.StringVar(&o.truthPath, "truth", "", "write the ground-truth NDJSON log to this file")
	fs.DurationVar(&o.tick, "tick", time.Second, "advance the world this often without requests (0: only on requests)")
	fs.StringVar(&o.accounts, "accounts", "", "serve many accounts: a count N (acct001…) or a comma-separated list; account A at /a/A/api/v1 with keys KEY-A and seed SEED+i")
	fs.StringVar(&o.truthDir, "truth-dir", "", "with --accounts: write each account's truth log to DIR/ACCOUNT.ndjson")
	fs.IntVar(&o.otherClient, "other-client", 0, "requests per rate window another integration of the account spends (0: none)")
}

// resolveFlags completes c from the raw flag values and the environment and
// checks it, returning every problem found at once.
func resolveFlags(fs *flag.FlagSet, c *sim.Config, r *rawFlags, getenv func(string) string) error {
	var errs []error
	if c.APIKey == "" {
		c.APIKey = getenv("CALLCENTER_SIM_API_KEY")
	}
	if c.APIKey == "" {
		errs = append(errs, errors.New("--api-key (or CALLCENTER_SIM_API_KEY) is required"))
	}
	if r.keysFile != "" {
		keys, err := readKeys(r.keysFile)
		if err != nil {
			errs = append(errs, err)
		}
		c.Keys = append(c.Keys, keys...)
	}
	if r.start != "" {
		t, err := time.Parse(time.RFC3339, r.start)
		if err != nil {
			errs = append(errs, fmt.Errorf("--start: %w", err))
		}
		c.Start = t
	}
	var err error
	if c.Hostile, err = sim.ParseFaults(r.faults); err != nil {
		errs = append(errs, fmt.Errorf("--faults: %w", err))
	}
	overrideHostile(fs, &c.Hostile, r.h)
	if c.Order, err = sim.ParseOrder(r.order); err != nil {
		errs = append(errs, fmt.Errorf("--order: %w", err))
	}
	if c.RetryAfter, err = sim.ParseRetryAfter(r.retryAfter); err != nil {
		errs = append(errs, fmt.Errorf("--retry-after: %w", err))
	}
	c.CallsIgnoreByTime = !r.callsByTime
	if c.Plan != 0 && c.Plan != 100 && c.Plan != 200 && c.Plan != 400 {
		errs = append(errs, fmt.Errorf("--plan %d: want 100, 200, 400 or 0", c.Plan))
	}
	if c.Burst429Every == 0 {
		c.Burst429Length = 0
	}
	return errors.Join(errs...)
}

// overrideHostile sets in dst the hazards whose flags were given (into set).
func overrideHostile(fs *flag.FlagSet, dst *sim.Hostile, set sim.Hostile) {
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "poison-rate":
			dst.PoisonRate = set.PoisonRate
		case "poison-reads":
			dst.PoisonReads = set.PoisonReads
		case "future-rate":
			dst.FutureRate = set.FutureRate
		case "not-found-rate":
			dst.NotFoundRate = set.NotFoundRate
		case "no-meta-rate":
			dst.NoMetaRate = set.NoMetaRate
		case "vanish-rate":
			dst.VanishRate = set.VanishRate
		case "stale-rate":
			dst.StaleRate = set.StaleRate
		case "endless-rate":
			dst.EndlessRate = set.EndlessRate
		case "big-call":
			dst.BigCall = set.BigCall
		}
	})
}

// readKeys reads a JSON object of key → role, in key order.
func readKeys(path string) ([]sim.Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--keys-file: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("--keys-file %s: %w", path, err)
	}
	keys := make([]sim.Key, 0, len(m))
	for k, role := range m {
		keys = append(keys, sim.Key{Key: k, Role: role})
	}
	slices.SortFunc(keys, func(a, b sim.Key) int { return strings.Compare(a.Key, b.Key) })
	return keys, nil
}
