package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// crashPoint kills the process (SIGKILL: no deferred code, no drain, no ack) at one
// step of the n-th message it handles, so that the tests can crash a real process
// where it hurts most. A nil *crashPoint never crashes. It is safe for concurrent use.
//
// The steps of a message: received (decoded, nothing written), committed (state
// and done mark written together, not acked), acked.
type crashPoint struct {
	step string
	n    int64
	seen atomic.Int64 // messages that reached "received"
}

// crashSteps are the steps a crash can be asked at.
var crashSteps = []string{"received", "committed", "acked"}

func (c *crashPoint) set(s string) error {
	step, n, ok := strings.Cut(s, ":")
	count, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || count < 1 || !slices.Contains(crashSteps, step) {
		return fmt.Errorf("want step:n with step one of %v and n >= 1", crashSteps)
	}
	c.step, c.n = step, count
	return nil
}

// at is called when message number seq (1-based, counted at "received") reaches step.
func (c *crashPoint) at(step string, seq int64) {
	if c != nil && c.step == step && seq == c.n {
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Kill() // SIGKILL on Unix: nothing after this line runs
		select {}
	}
}

// next numbers a received message.
func (c *crashPoint) next() int64 {
	if c == nil {
		return 0
	}
	return c.seen.Add(1)
}
