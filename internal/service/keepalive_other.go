//go:build !linux

package service

import (
	"syscall"
	"time"
)

// userTimeout does nothing where TCP_USER_TIMEOUT is not to be had: the
// keepalives and the request timeouts bound what it would.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
