//go:build nodemo

package main

import (
	"context"
	"errors"
	"io"
)

// The service build (-tags nodemo: the container image's, the benchmarks') leaves
// the demo out, and with it an in-process NATS server, a Redis-protocol server and
// the simulator: a binary of 30 MB instead of 42 and about 7 MB less resident
// memory (docs/performance.md).

func runDemo(context.Context, []string, func(string) string, io.Writer, io.Writer) error {
	return exitCode{2, errors.New("this poller was built without the demo (-tags nodemo, as the container image is); run it from the source: go run ./cmd/poller demo")}
}
