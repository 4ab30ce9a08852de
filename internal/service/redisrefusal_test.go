package service

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/skipreport"
)

// nonLoopbackIPv4 is an IPv4 address of this machine outside the loopback:
// a client connecting to it is remote for Redis's protected mode.
func nonLoopbackIPv4() string {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				return n.IP.String()
			}
		}
	}
	return ""
}

// A Redis in protected mode (no password) reached over a non-loopback address
// refuses the client with a "-DENIED ..." line and closes: the error names
// Redis's reason, not only the broken pipe the client sees.
func TestRedisRefusalReasonReachesTheError(t *testing.T) {
	ip := nonLoopbackIPv4()
	if ip == "" {
		skipreport.Skip(t, "no non-loopback IPv4 address on this machine: Redis's protected mode cannot be reached remotely")
	}
	// Bound to the loopback too: redistest checks the server is up through it.
	rs := redistest.StartWithArgs(t, "--bind", ip+" 127.0.0.1", "--protected-mode", "yes")
	_, port, _ := net.SplitHostPort(rs.Addr)
	rdb, err := connectRedis(config.Settings{RedisURL: "redis://" + net.JoinHostPort(ip, port) + "/0", LeaseTTL: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	err = rdb.Ping(t.Context()).Err()
	var refused *RedisRefusedError
	if !errors.As(err, &refused) || !strings.HasPrefix(refused.Reason, "DENIED") || !strings.Contains(err.Error(), "protected mode") {
		t.Fatalf("ping over %s: %v, want a *RedisRefusedError with Redis's DENIED reason", ip, err)
	}
	// The loopback is local for Redis: the same server answers there.
	local, err := connectRedis(config.Settings{RedisURL: rs.URL, LeaseTTL: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	if err := local.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("ping over the loopback: %v", err)
	}
}
