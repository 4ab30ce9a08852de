// Command poller is the callbus service: it polls the call-center API, diffs what
// it reads against snapshots in Redis and publishes change events to NATS
// JetStream.
//
//	poller [run]                      the service (configuration from CALLBUS_* or --config)
//	poller demo                       everything in one process, with a live feed of events
//	poller config validate|docs|schema
//	poller setup --addr 127.0.0.1:10001
//	poller replay [--since D|T] [--from-seq N] [--until D|T] [--subject F] [--type T] [--pretty] [--to PREFIX] [--follow]
//	poller tail [--subject F] [--type T]
//	poller backfill --since D|T [--until D|T] [--resources calls,call_metrics,users,teams]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/callbus/callbus/config"
)

// version is set at build time (-ldflags -X main.version=…).
var version = "dev"

// exitCode is an error that asks for a particular exit status.
type exitCode struct {
	code int
	err  error
}

func (e exitCode) Error() string { return e.err.Error() }
func (e exitCode) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	for _, name := range config.UnknownEnv(os.Environ()) {
		fmt.Fprintf(os.Stderr, "poller: warning: %s matches no configuration parameter (see `poller config docs`)\n", name)
	}
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "poller:", err)
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(ec.code)
		}
		os.Exit(1)
	}
}

// run dispatches the subcommand. It takes its inputs as arguments so tests can
// drive the whole binary.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runService(ctx, args, getenv, stderr)
	case "demo":
		return runDemo(ctx, args, getenv, stdout, stderr)
	case "config":
		return runConfig(args, getenv, stdout, stderr)
	case "setup":
		return runSetup(ctx, args, getenv, stderr)
	case "replay":
		return runReplay(ctx, args, getenv, stdout, stderr)
	case "tail":
		return runTail(ctx, args, getenv, stdout, stderr)
	case "backfill":
		return runBackfill(ctx, args, getenv, stderr)
	case "version":
		_, err := fmt.Fprintln(stdout, "callbus poller", version)
		return err
	case "help", "-h", "--help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	}
	return exitCode{2, fmt.Errorf("unknown command %q\n%s", cmd, usage)}
}

const usage = `usage: poller [command] [flags]

commands:
  run                  run the service (default); configuration from CALLBUS_* and --config FILE
  demo                 simulator, NATS and Redis in one process, with a live feed of events
  config validate      lint the declaration and validate the configuration (exit 2 when invalid)
  config docs          print the configuration table (Markdown)
  config schema        print the JSON Schema of the configuration (Helm values)
  setup --addr ADDR    serve the setup page at /custom_configs
  replay [flags]       print stored events as NDJSON (--since, --from-seq, --until, --subject, --type, --pretty, --to, --follow)
  tail [flags]         print new events as readable lines until interrupted (--subject, --type)
  backfill [flags]     announce history through the account export (--since, --until, --resources, --progress)
  version              print the version
`
