package service

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A replica of a fleet serves thousands of accounts, most of them quiet: what
// each holds of its own is paid thousands of times. The clients below are the
// process's, shared by its accounts; what keeps one account from delaying
// another is each account's own bounds (its limiter, its relay's window of
// publishes), not a client apiece.

// apiTransports are the process's HTTP transports to the call-center APIs: one
// per lease TTL (apiDialer's keepalives follow the TTL, and a fleet's accounts
// nearly always share one), shared by every account. Accounts served by one
// host (a provider's API, the simulator) share its pool of connections: a
// connection idle after one account's request serves the next account's, so a
// replica holds about as many connections as it has requests in flight,
// instead of a pool and two goroutines per account. No per-host limit on
// connections: an account whose API answers slowly holds the connections its
// own requests need and never makes another's wait for one.
type apiTransports struct {
	mu    sync.Mutex
	byTTL map[time.Duration]*http.Transport
}

// get is the transport for accounts with lease TTL leaseTTL.
func (t *apiTransports) get(leaseTTL time.Duration) *http.Transport {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr := t.byTTL[leaseTTL]; tr != nil {
		return tr
	}
	if t.byTTL == nil {
		t.byTTL = map[time.Duration]*http.Transport{}
	}
	tr := apiTransport(leaseTTL)
	t.byTTL[leaseTTL] = tr
	return tr
}

// closeIdle closes every idle connection (at the process's end).
func (t *apiTransports) closeIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tr := range t.byTTL {
		tr.CloseIdleConnections()
	}
}

// apiIdleConnsPerHost is how many idle connections to one API host the shared
// transport keeps for the next requests: about the requests a replica has in
// flight to one host at once (each account's resources run concurrently, and
// thousands of accounts poll the same host). Beyond it a connection is closed
// after its request and the next one dials.
const apiIdleConnsPerHost = 64

// apiTransport is an HTTP transport to the call-center API: Go's defaults (proxy
// from the environment, HTTP/2, timeouts, idle connections closed after 90 s),
// apiDialer's keepalives, which notice a connection a partition killed within
// the lease TTL, and room for apiIdleConnsPerHost idle connections per host.
func apiTransport(leaseTTL time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = apiDialer(leaseTTL).DialContext
	t.MaxIdleConnsPerHost = apiIdleConnsPerHost
	t.MaxIdleConns = 4 * apiIdleConnsPerHost // a few hosts (the default, 100, for all)
	return t
}

// jetStream is the process's JetStream context, shared by its accounts: stream
// management, reconciles and reads back. The relays publish on its connection
// with replies of their own (publish's ackHub: one subscription for the
// process, a window per relay), not through the context's asynchronous
// publishes.
func jetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return js, nil
}
