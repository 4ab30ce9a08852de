package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
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

// helpFull reports whether args ask for the full help (--help, -help) rather
// than the short one (-h: the usage lines and the flags).
func helpFull(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-help", "--help":
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
		if helpFull(args) {
			fs.SetOutput(stdout)
			fs.Usage()
			return errHelp
		}
		var full strings.Builder
		fs.SetOutput(&full)
		fs.Usage()
		fs.SetOutput(stdout)
		_, err := io.WriteString(stdout, shortHelp(full.String()))
		return errors.Join(errHelp, err)
	}
	if err := fs.Parse(args); err != nil {
		return exitCode{2, err}
	}
	if fs.NArg() > 0 {
		return exitCode{2, fmt.Errorf("%s: unexpected arguments %q (see `poller %s --help`)", fs.Name(), fs.Args(), fs.Name())}
	}
	return nil
}

// shortHelp is a command's usage (printUsage's text) cut to its first
// paragraph, the usage lines, and its flags.
func shortHelp(full string) string {
	head, rest, more := strings.Cut(full, "\n\n")
	if !more {
		return full
	}
	short := head + "\n(--help for the full text)\n"
	if i := strings.Index(rest, "\nflags:\n"); i >= 0 {
		short += rest[i:]
	}
	return short
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
  state                print each account's lease, cursors, outbox, stream position and
                       audit list from Redis and NATS (--account, --json); read-only
  state rewind         re-read an account's calls from an earlier time, under its lease
                       (--account, --resource, --to, --ask-leader)
  debug bundle         write a zip for a bug report, secrets scrubbed (--out, --log)
  completion           print a shell completion script: bash, zsh or fish
  forget               erase one person's values from an account's Redis state (--account,
                       --user ID | --phone NUMBER), under its lease
  resync               ask the account's leader to re-announce the current state of users,
                       teams and calls as *.snapshot events (--resources, --entity, --since)
  version              print the version
  help                 print this text
`

// usageMore is what `poller --help` (and `poller help`) adds to `poller -h`.
const usageMore = `
global flags:
  --no-color
    	no colours in console output (as NO_COLOR=1 in the environment)
  --json
    	on status, state, config validate, backfill: JSON on stdout, errors too
    	({"error": {"code", "message", "exit_code", "problems"}})
  -h, --help
    	-h: the usage lines and flags of a command; --help: the whole text

environment:
  CALLBUS_*            the settings (` + "`poller config docs`" + `); CALLBUS_<KEY>_FILE reads a file
  NO_COLOR             set (to anything) for no colours in console output (no-color.org)

exit status:
  0  success, or help asked for
  1  the command failed or was refused (a refusal names who or what refused it)
  2  usage: an unknown command or flag, a missing argument, an invalid configuration
`
