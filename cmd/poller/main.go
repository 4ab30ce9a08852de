// Command poller is the callbus service: it polls the call-center API, diffs what
// it reads against snapshots in Redis and publishes change events to NATS
// JetStream.
//
//	poller [run]                      the service (configuration from CALLBUS_* or --config)
//	poller demo                       everything in one process, with a live feed of events
//	poller config validate|docs|schema
//	poller setup --addr 127.0.0.1:10001
//	poller replay [--since D|T] [--from-seq N] [--until D|T] [--subject F] [--type T] [--entity E] [--pretty] [--to PREFIX] [--follow]
//	poller tail [--subject F] [--type T] [--entity E]
//	poller help, poller COMMAND --help
//	poller status [--addr HOST:PORT]
//	poller backfill --since D|T [--until D|T] [--resources calls,call_metrics,users,teams]
//	poller account forget --account NAME [--force]
//	poller state [--account NAME] [--json], poller state rewind --account NAME --to T
//	poller debug bundle [--out FILE]
//	poller forget --account NAME (--user ID | --phone NUMBER)
//	poller resync --resources users,teams,calls [--entity calls/812] [--since T]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
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
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		if !errors.As(err, new(jsonReported)) {
			fmt.Fprintln(os.Stderr, "poller:", err)
		}
		os.Exit(exitStatus(err))
	}
}

// run dispatches the subcommand. It takes its inputs as arguments so tests can
// drive the whole binary. Every command answers -h/--help with its usage on
// stdout and a nil error (exit status 0).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	args, noColor := withoutFlag(args, "--no-color")
	if noColor || getenv("NO_COLOR") != "" {
		stdout, stderr = noColorWriter{stdout}, noColorWriter{stderr}
	}
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && wantsHelp(args[:1]) {
		cmd = "help"
	}
	err := helpDone(dispatch(ctx, cmd, args, getenv, stdout, stderr))
	if err != nil && wantsJSON(args) {
		return reportJSON(stdout, err)
	}
	return err
}

func dispatch(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	switch cmd {
	case "run":
		return runService(ctx, args, getenv, stdout, stderr)
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
	case "status":
		return runStatus(ctx, args, getenv, stdout, stderr)
	case "backfill":
		return runBackfill(ctx, args, getenv, stdout, stderr)
	case "account":
		return runAccount(ctx, args, getenv, stdout, stderr)
	case "state":
		return runState(ctx, args, getenv, stdout, stderr)
	case "debug":
		return runDebug(ctx, args, getenv, stdout, stderr)
	case "forget":
		return runForget(ctx, args, getenv, stdout, stderr)
	case "resync":
		return runResync(ctx, args, getenv, stdout, stderr)
	case "version":
		_, err := fmt.Fprintln(stdout, "callbus poller", version)
		return err
	case "completion":
		return runCompletion(args, stdout, stderr)
	case "help":
		text := usage
		if len(args) == 0 || helpFull(args) {
			text += usageMore
		}
		_, err := fmt.Fprint(stdout, text)
		return err
	}
	return exitCode{2, fmt.Errorf("unknown command %q\n%s", cmd, usage)}
}
