package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/telemetry"
)

// runService is `poller run`.
func runService(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "JSON values file (see `poller config docs`)")
	if err := fs.Parse(args); err != nil {
		return exitCode{2, err}
	}
	s, err := config.Load(getenv, *file)
	if err != nil {
		if config.IsInvalid(err) {
			return exitCode{2, fmt.Errorf("invalid configuration:\n%w", err)}
		}
		return err
	}
	log := newLogger(stderr, s.LogLevel, s.LogFormat)
	tp, shutdown, err := telemetry.NewTracerProvider(ctx, getenv, version)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn().Err(err).Msg("traces not flushed")
		}
	}()
	return service.Run(ctx, s, log, service.WithVersion(version), service.WithTracerProvider(tp))
}
