package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/service"
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
	return service.Run(ctx, s, newLogger(stderr, s.LogLevel, s.LogFormat), service.Options{Version: version})
}
