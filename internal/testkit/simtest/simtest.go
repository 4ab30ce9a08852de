// Package simtest is the harness the integration tests share: a buffer safe for a
// writer and readers in other goroutines, polling a condition with a deadline, a
// free loopback address, and a simulated world served over HTTP with its ground
// truth. Only tests import it.
package simtest

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers (a child
// process's output, a logger, the simulator's truth log read while it runs).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Bytes returns a copy of everything written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// Lines returns what was written split into lines, without the last newline; nil
// when nothing but white space was written.
func (b *Buffer) Lines() []string {
	s := strings.TrimSpace(b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// pollEvery is how often WaitFor checks its condition: a polling interval, not a
// wait for the condition itself.
const pollEvery = 10 * time.Millisecond

// WaitFor polls cond until it holds, and fails t (FailNow, so from the test's own
// goroutine only) naming what after limit. Give limit a wide margin: tests run on
// loaded machines, and only the failure waits that long.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(pollEvery)
	}
}

// FreeAddr returns a loopback host:port that was free when it was called, for a
// server the test starts next (another process could take it first; on loopback,
// with the kernel handing out ports in turn, that does not happen in practice).
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
