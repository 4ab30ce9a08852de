package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/callbus/callbus/internal/setup"
)

// runSetup is `poller setup`: it serves the setup page at /custom_configs until
// interrupted; INSTALL saves the values to --config (mode 0600), which `poller run
// --config` reads. Serve it on loopback only: anyone who reaches it can rewrite the
// configuration.
func runSetup(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:10001", "listen address")
	file := fs.String("config", "callbus.values.json", "values file to prefill from and save to")
	if err := fs.Parse(args); err != nil {
		return exitCode{2, err}
	}
	log := newLogger(stderr, getenv("CALLBUS_LOG_LEVEL"), "console")
	h, err := setup.New(setup.Options{ValuesFile: *file, Logger: log})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("setup: listen %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Info().Str("url", "http://"+l.Addr().String()+setup.Path).Str("values_file", *file).Msg("setup page")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
