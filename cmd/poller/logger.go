package main

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// newLogger builds the service logger: JSON lines on w, or readable console output,
// coloured only when w is a terminal (a file or a pipe gets no escape codes).
// Fields named in hide are left out of console output (the demo's internal
// configuration); JSON keeps them.
func newLogger(w io.Writer, level, format string, hide ...string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	if format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: !isTerminal(w), FieldsExclude: hide}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Str("service", "callbus").Logger()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
