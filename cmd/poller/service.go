package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/fleet"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/rs/zerolog"
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
	if unknown := config.UnknownEnv(os.Environ()); len(unknown) > 0 {
		log.Warn().Strs("variables", unknown).Msg("these CALLBUS_ variables match no setting and are ignored (see `poller config docs`)")
	}
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
	opts := []service.Option{service.WithVersion(version), service.WithTracerProvider(tp)}
	if s.AccountsDir != "" {
		src, err := watchAccounts(ctx, s.AccountsDir, getenv, *file, log)
		if err != nil {
			return err
		}
		opts = append(opts, service.WithAccounts(src))
	}
	return service.Run(ctx, s, log, opts...)
}

// watchAccounts watches the accounts directory of a fleet (accounts_dir): each
// <account>.json there laid over the process's own values (CALLBUS_*, --config,
// defaults).
func watchAccounts(ctx context.Context, dir string, getenv func(string) string, file string, log zerolog.Logger) (*fleet.Dir, error) {
	base, err := config.ProcessValues(getenv, file)
	if err != nil {
		return nil, err
	}
	src, err := fleet.WatchDir(ctx, dir, base, log.With().Str("component", "accounts").Logger())
	if err != nil {
		return nil, fmt.Errorf("accounts_dir: %w", err)
	}
	return src, nil
}

var runUsage = `usage: poller [run] [--config FILE]

Runs the service until interrupted (SIGINT, SIGTERM). With accounts_dir set
(CALLBUS_ACCOUNTS_DIR) it is a member of a fleet serving the accounts of that
directory, one <account>.json each; without, it serves the one account configured. Settings come from the
CALLBUS_* variables (CALLBUS_<KEY>, or CALLBUS_<KEY>_FILE for a file holding the
value), then --config FILE, then the defaults: ` + "`poller config docs`" + ` lists them,
` + "`poller config validate`" + ` checks them. Logs are JSON lines on stderr.
The other commands: ` + "`poller help`" + `.
`

// warnUnknownEnv writes a warning line to w for each CALLBUS_ variable of the
// process that matches no setting: likely a typo, which Load ignores.
func warnUnknownEnv(w io.Writer) {
	for _, name := range config.UnknownEnv(os.Environ()) {
		fmt.Fprintf(w, "poller: warning: %s matches no setting and is ignored (see `poller config docs`)\n", name)
	}
}

// loadConfig is config.Load with an invalid configuration as exit status 2.
func loadConfig(getenv func(string) string, file string) (config.Settings, error) {
	s, err := config.Load(getenv, file)
	if err != nil && config.IsInvalid(err) {
		return s, exitCode{2, fmt.Errorf("invalid configuration:\n%w", err)}
	}
	return s, err
}
