package service

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userTimeout is a dialer's Control that sets TCP_USER_TIMEOUT to d: the kernel
// aborts the connection when data it sent stays unacknowledged that long.
func userTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}
}
