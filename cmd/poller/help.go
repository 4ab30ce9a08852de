package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// errHelp is returned by a command whose arguments asked for its usage (-h,
// -help, --help): the usage is on stdout and the exit status is 0.
var errHelp = errors.New("help requested")

// wantsHelp reports whether args ask for help: -h, -help or --help before any
// "--". A flag's value that happens to read "-h" counts too, which costs nothing:
// no flag of the poller takes such a value.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// newFlags returns a flag set for a command whose usage is synopsis (a few lines,
// ending with a newline) followed by its flags; errors and their usage go to
// stderr.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(fs.Output(), fs, synopsis) }
	return fs
}

// printUsage writes synopsis and the flags of fs (if any) to w.
func printUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprint(w, synopsis)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nflags:\n")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// parseFlags parses args into fs. When args ask for help it prints the usage on
// stdout and returns errHelp; a bad flag is exit status 2 (the flag package has
// printed the problem and the usage on stderr); so are arguments left over.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if wantsHelp(args) {
		fs.SetOutput(stdout)
		fs.Usage()
		return errHelp
	}
	if err := fs.Parse(args); err != nil {
		return exitCode{2, err}
	}
	if fs.NArg() > 0 {
		return exitCode{2, fmt.Errorf("%s: unexpected arguments %q (see `poller %s --help`)", fs.Name(), fs.Args(), fs.Name())}
	}
	return nil
}

// helpDone turns errHelp into success, and a help flag the command's own parser
// answered (flag.ErrHelp, as `poller setup` does) into success too.
func helpDone(err error) error {
	if errors.Is(err, errHelp) || errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

const usage = `usage: poller [command] [flags]

Polls the call-center API and publishes change events to NATS JetStream.
Run ` + "`poller COMMAND --help`" + ` for the flags of a command.

commands:
  run                  run the service (the default); configuration from CALLBUS_*
                       variables and --config FILE (see ` + "`poller config docs`" + `)
  demo                 simulator, NATS and Redis in one process, with a live feed of events
  config validate      validate the configuration: every required setting, every value
                       (exit 2 when invalid)
  config docs          print the configuration table (Markdown)
  config schema        print the JSON Schema of the configuration (Helm values)
  setup                serve the setup page at /custom_configs (--addr, --config)
  replay               print stored events as NDJSON or readable lines: a time range,
                       a subject or type, or one entity's history (--entity calls/812)
  tail                 print new events as readable lines until interrupted
  backfill             announce history through the account export (--since, --until,
                       --resources, --progress)
  status               print a running poller's status page (--addr, default CALLBUS_HTTP_ADDR)
  account forget       remove every Redis key of an account no longer served (--account,
                       --force): refused while configured, led or with events unpublished
  resync               ask the account's leader to re-announce the current state of users,
                       teams and calls as *.snapshot events (--resources, --entity, --since)
  version              print the version
  help                 print this text
`
