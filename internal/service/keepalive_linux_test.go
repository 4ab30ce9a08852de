package service

import (
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Every keepalive gives a dead connection up within the lease TTL, at the
// smallest, the default and the largest TTL allowed: the NATS client after its
// PING interval times (MaxPingsOut + 1), the API's TCP keepalive after its idle
// time plus its probes.
func TestKeepalivesWithinTheLease(t *testing.T) {
	for _, ttl := range []time.Duration{3 * time.Second, 15 * time.Second, 300 * time.Second} {
		every := keepaliveEvery(ttl)
		if nats := every * (keepaliveProbes + 1); nats > ttl {
			t.Errorf("TTL %s: a stale NATS connection is noticed after %s", ttl, nats)
		}
		ka := apiDialer(ttl).KeepAliveConfig
		if tcp := ka.Idle + ka.Interval*time.Duration(ka.Count); !ka.Enable || tcp > ttl {
			t.Errorf("TTL %s: a dead API connection is noticed after %s (enabled %v)", ttl, tcp, ka.Enable)
		}
	}
}

// The API dialer's connections carry TCP_USER_TIMEOUT = the lease TTL: data
// left unacknowledged by a partitioned peer aborts the connection then.
func TestAPIDialerUserTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := apiDialer(15*time.Second).Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		got, gerr = unix.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	if got != 15000 {
		t.Errorf("TCP_USER_TIMEOUT %d ms, want 15000", got)
	}
}
