package main

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// newLogger builds the service logger: JSON lines on w, or readable console output,
// coloured only when w is a terminal (a file or a pipe gets no escape codes)
// and colours are not turned off (noColorWriter).
// Fields named in hide are left out of console output (the demo's internal
// configuration); JSON keeps them.
func newLogger(w io.Writer, level, format string, hide ...string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	if format == "console" {
		_, plain := w.(noColorWriter)
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: plain || !isTerminal(w), FieldsExclude: hide}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Str("service", "callbus").Logger()
}

// noColorWriter marks an output that must carry no colours (--no-color,
// NO_COLOR): it is still a terminal for everything else.
type noColorWriter struct{ io.Writer }

// withoutFlag returns args less every flag before "--" (and whether there
// was one): a global flag such as --no-color, taken out before a command parses its own.
func withoutFlag(args []string, flag string) ([]string, bool) {
	out := make([]string, 0, len(args))
	found, ended := false, false
	for _, a := range args {
		switch {
		case ended:
		case a == "--":
			ended = true
		case a == flag:
			found = true
			continue
		}
		out = append(out, a)
	}
	return out, found
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	if nc, ok := w.(noColorWriter); ok {
		w = nc.Writer
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
