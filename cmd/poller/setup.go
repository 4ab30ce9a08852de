package main

import (
	"context"
	"errors"
	"io"
)

// runSetup is `poller setup`; wired once internal/setup lands.
func runSetup(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	return errors.New("setup: not available yet")
}
