//go:build !linux

package netfault

import (
	"errors"
	"time"
)

// delayer is Linux's NFQUEUE reader; network namespaces are Linux's too, so
// New skips before a Delay could be asked for elsewhere.
type delayer struct{}

// Delay fails the test: there is no NFQUEUE here.
func (n *Net) Delay(time.Duration, time.Duration, uint64) {
	n.t.Helper()
	n.t.Fatal(errors.New("netfault: Delay needs Linux"))
}

func (n *Net) stopDelays() {}
