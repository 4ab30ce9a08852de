package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// served is what run serves: one account (*sim.Sim) or many (*sim.Accounts).
type served interface {
	Handler() http.Handler
	Sync()
	Close() error
	banner(addr net.Addr) string
}

// single serves one account.
type single struct {
	*sim.Sim
	cfg sim.Config
}

func (s single) banner(addr net.Addr) string {
	c := s.cfg
	return fmt.Sprintf("callcenter-sim listening on http://%s (seed %d, speed %g, start %s, plan %d, %d keys)",
		addr, c.Seed, c.Speed, s.Start().Format(time.RFC3339), c.Plan, 1+len(c.Keys))
}

// many serves --accounts.
type many struct {
	*sim.Accounts
	cfg sim.Config
}

func (m many) banner(addr net.Addr) string {
	names := m.Names()
	return fmt.Sprintf("callcenter-sim listening on http://%s%s<account>/api/v1 for %d accounts (%s … %s; seed %d+i, speed %g, plan %d, keys KEY-<account>)",
		addr, sim.AccountPrefix, len(names), names[0], names[len(names)-1], m.cfg.Seed, m.cfg.Speed, m.cfg.Plan)
}

// build makes the simulator of opts, and a function that closes the single
// account's truth file (Accounts closes its own).
func build(opts options) (served, func(), error) {
	noop := func() {}
	if opts.accounts != "" {
		if opts.otherClient != 0 {
			return nil, noop, errors.New("--other-client serves one account: not with --accounts")
		}
		if opts.truthPath != "" {
			return nil, noop, errors.New("--truth serves one account: with --accounts use --truth-dir")
		}
		a, err := buildAccounts(opts)
		return a, noop, err
	}
	if opts.truthDir != "" {
		return nil, noop, errors.New("--truth-dir needs --accounts")
	}
	cfg := opts.cfg
	closeTruth := noop
	if opts.truthPath != "" {
		f, err := os.Create(opts.truthPath)
		if err != nil {
			return nil, noop, fmt.Errorf("open truth log: %w", err)
		}
		closeTruth = func() { _ = f.Close() }
		cfg.Truth = f
	}
	s, err := sim.New(cfg)
	if err != nil {
		closeTruth()
		return nil, noop, fmt.Errorf("build simulator: %w", err)
	}
	stopOther := s.OtherClient(opts.otherClient)
	return single{Sim: s, cfg: cfg}, func() { stopOther(); closeTruth() }, nil
}

// buildAccounts serves the --accounts list: account i gets seed SEED+i and every
// key suffixed with "-<account>".
func buildAccounts(opts options) (served, error) {
	names, err := parseAccounts(opts.accounts)
	if err != nil {
		return nil, fmt.Errorf("--accounts: %w", err)
	}
	base := opts.cfg
	ac := sim.AccountsConfig{Names: names, Start: base.Start, Speed: base.Speed,
		Config: func(i int, name string) sim.Config { return accountConfig(base, i, name) }}
	if opts.truthDir != "" {
		if err := os.MkdirAll(opts.truthDir, 0o755); err != nil {
			return nil, fmt.Errorf("--truth-dir: %w", err)
		}
		ac.Truth = func(name string) (io.Writer, error) {
			return os.Create(filepath.Join(opts.truthDir, name+".ndjson"))
		}
	}
	a, err := sim.NewAccounts(ac)
	if err != nil {
		return nil, fmt.Errorf("build simulator: %w", err)
	}
	return many{Accounts: a, cfg: base}, nil
}

// accountConfig is base for account i: its own seed and keys.
func accountConfig(base sim.Config, i int, name string) sim.Config {
	c := base
	c.Seed = base.Seed + uint64(i)
	c.APIKey = base.APIKey + "-" + name
	c.Keys = make([]sim.Key, len(base.Keys))
	for j, k := range base.Keys {
		c.Keys[j] = sim.Key{Key: k.Key + "-" + name, Role: k.Role}
	}
	return c
}

// parseAccounts reads a count N (acct001…) or a comma-separated list of names.
func parseAccounts(v string) ([]string, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 || n > 100000 {
			return nil, fmt.Errorf("%d: want 1 to 100000", n)
		}
		return sim.AccountNames(n), nil
	}
	var names []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("want a count or a list of names")
	}
	return names, nil
}
