package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/telemetry"
)

// runService is `poller run`.
func runService(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("run", runUsage, stderr)
	file := fs.String("config", "", "JSON values `FILE`, as the setup page saves it; CALLBUS_* variables take precedence (see `poller config docs`)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	s, err := loadConfig(getenv, *file)
	if err != nil {
		return err
	}
	log := newLogger(stderr, s.LogLevel, s.LogFormat)
	service.RouteDriverLogs(log)
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
	return service.Run(ctx, s, log, service.Options{Version: version, TracerProvider: tp})
}

var runUsage = `usage: poller [run] [--config FILE]

Runs the service until interrupted (SIGINT, SIGTERM). Settings come from the
CALLBUS_* variables (CALLBUS_<KEY>, or CALLBUS_<KEY>_FILE for a file holding the
value), then --config FILE, then the defaults: ` + "`poller config docs`" + ` lists them,
` + "`poller config validate`" + ` checks them. Logs are JSON lines on stderr.

` + commandList()

// loadConfig is config.Load with an invalid configuration as exit status 2.
func loadConfig(getenv func(string) string, file string) (config.Settings, error) {
	s, err := config.Load(getenv, file)
	if err != nil && config.IsInvalid(err) {
		return s, exitCode{2, fmt.Errorf("invalid configuration:\n%w", err)}
	}
	return s, err
}
