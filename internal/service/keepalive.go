package service

import (
	"net"
	"time"

	"github.com/nats-io/nats.go"
)

// Under a network partition a connection rarely closes: packets are dropped
// silently, and a peer that waits for an answer waits until its own deadline.
// Every client of the service therefore has a deadline and a keepalive tied to the
// lease TTL, so that a dead connection is noticed, and replaced, within the TTL
// (docs/partitions.md lists each one and why).

// keepaliveShare is the part of the lease TTL between two keepalive probes of a
// connection (a NATS PING, a TCP keepalive to the API): with two probes
// unanswered on top of the first wait, a dead connection is given up 3/4 of a
// TTL after it went quiet.
const keepaliveShare = 4

// keepaliveProbes is how many probes may go unanswered before a connection is
// declared dead (NATS MaxPingsOut, TCP_KEEPCNT).
const keepaliveProbes = 2

// keepaliveEvery is the interval between probes for a lease TTL: TTL/4, at least
// one second (TCP keepalives count whole seconds).
func keepaliveEvery(leaseTTL time.Duration) time.Duration {
	return max(time.Second, leaseTTL/keepaliveShare)
}

// natsKeepalive are the NATS connection's deadline options: the client PINGs
// every TTL/4 and gives the connection up as stale after two unanswered PINGs
// (nats.go's defaults, 2 minutes and 2, took up to 6 minutes to notice a silent
// cut, while the relay's publishes timed out one after another on a connection
// that would never answer), and a dial gives up after the same interval
// (default 2 s) so that the next server of the URL list is tried.
func natsKeepalive(leaseTTL time.Duration) []nats.Option {
	every := keepaliveEvery(leaseTTL)
	return []nats.Option{nats.PingInterval(every), nats.MaxPingsOutstanding(keepaliveProbes), nats.Timeout(min(every, 2*time.Second))}
}

// apiDialer is the API transport's dialer: a connect attempt gives up after
// 10 s; a connection with nothing in flight is probed every TTL/4 and dropped
// after two unanswered probes (Go's default probes every 15 s, nine times); and
// one whose sent data stays unacknowledged for a TTL is aborted (TCP_USER_TIMEOUT
// where the system has it: without it Linux retransmits for about 15 minutes,
// which a report download, having no overall timeout, would wait out).
func apiDialer(leaseTTL time.Duration) *net.Dialer {
	every := keepaliveEvery(leaseTTL)
	return &net.Dialer{Timeout: 10 * time.Second, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: every, Interval: every, Count: keepaliveProbes,
	}, Control: userTimeout(max(time.Second, leaseTTL))}
}
