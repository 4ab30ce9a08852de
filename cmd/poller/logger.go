package main

import (
	"io"
	"time"

	"github.com/rs/zerolog"
)

// newLogger builds the service logger: JSON lines on w, or readable console output.
func newLogger(w io.Writer, level, format string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	if format == "console" {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Str("service", "callbus").Logger()
}
