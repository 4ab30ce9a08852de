// Command callcenter-sim serves a simulated call-center REST API (see package
// internal/sim) for demos, tests and benchmarks:
//
//	callcenter-sim --api-key KEY [--key KEY=ROLE]... [--seed 1] [--speed 60] [--truth truth.ndjson]
//
// The key may also come from CALLCENTER_SIM_API_KEY. It logs one line with the
// address at start, never a key, and on SIGINT or SIGTERM stops serving and flushes
// the truth log.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "callcenter-sim:", err)
		os.Exit(1)
	}
}

// shutdownTimeout bounds the wait for in-flight requests at shutdown.
const shutdownTimeout = 5 * time.Second

// run parses args, builds the simulator and serves it until ctx is done, then
// shuts the server down and flushes the truth log. Log lines go to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	opts, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg := opts.cfg
	if opts.truthPath != "" {
		f, err := os.Create(opts.truthPath)
		if err != nil {
			return fmt.Errorf("open truth log: %w", err)
		}
		defer f.Close()
		cfg.Truth = f
	}
	s, err := sim.New(cfg)
	if err != nil {
		return fmt.Errorf("build simulator: %w", err)
	}
	defer s.Close()
	defer s.OtherClient(opts.otherClient)()

	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.addr, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "callcenter-sim listening on http://%s (seed %d, speed %g, start %s, plan %d, %d keys)\n",
		ln.Addr(), cfg.Seed, cfg.Speed, s.Start().Format(time.RFC3339), cfg.Plan, 1+len(cfg.Keys))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var tick <-chan time.Time
	if opts.tick > 0 {
		t := time.NewTicker(opts.tick)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case err := <-errc:
			return fmt.Errorf("serve: %w", err)
		case <-tick:
			s.Sync() // keep the truth log up with time when no requests come
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("shutdown: %w", err)
			}
			if err := s.Close(); err != nil {
				return fmt.Errorf("flush truth log: %w", err)
			}
			return nil
		}
	}
}
