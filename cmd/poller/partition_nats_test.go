package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// TestPartitionNATSNode: a 3-node JetStream cluster. The busiest poller is cut
// from the NATS node its connection is on, both ways, silently; the other two
// nodes stay reachable. Its accounts must be published again within the lease
// TTL's order of time, through another node: the client has to notice the dead
// connection by itself (its PINGs) since nothing closes it.
func TestPartitionNATSNode(t *testing.T) {
	b, watch := partStart(t, 3, 3, 0, 2, partSpeed)
	js := jetStream(t, b.natsConn(t))
	p := b.busiest(t)
	server := b.natsServerOf(t, "callbus-"+p.instance)
	var led []string
	for name, l := range b.holders(t) {
		if instanceOf(l.holder) == p.instance {
			led = append(led, name)
		}
	}
	reconnects := func() int { return strings.Count(p.stderr.String(), "nats: reconnected") }
	was := reconnects()
	b.net.Cut(p.instance, server)
	at := time.Now()
	// 30 s: ten lease TTLs, for a loaded machine; with nats.go's default PINGs
	// (every 2 minutes, 2 outstanding) the dead connection is noticed after
	// minutes.
	simtest.WaitFor(t, 30*time.Second, p.instance+" to notice the dead connection and reconnect", func() bool {
		return reconnects() > was
	})
	t.Logf("%s reconnected %s after the cut from %s", p.instance, time.Since(at).Round(100*time.Millisecond), server)
	before := accountMsgs(t, js, led)
	simtest.WaitFor(t, 30*time.Second, p.instance+"'s accounts to be published through another NATS node", func() bool {
		return accountMsgs(t, js, led) > before
	})
	time.Sleep(time.Until(at.Add(faultFor()))) // the fault's length, not a wait for a condition
	b.net.HealAll()
	b.verdict(t, "poller ↔ its NATS node cut (R3, others reachable)", "1 cut of "+faultFor().String(), watch)
}

// natsServerOf is the name of the NATS node holding the client connection
// named name (from each node's /connz).
func (b *partBed) natsServerOf(t *testing.T, name string) string {
	t.Helper()
	var found string
	simtest.WaitFor(t, 30*time.Second, "the NATS node of "+name, func() bool {
		for _, node := range b.net.Nodes() {
			if !strings.HasPrefix(node.Name, "nats-") {
				continue
			}
			resp, err := http.Get("http://" + node.Addr.String() + ":8222/connz")
			if err != nil {
				continue
			}
			var connz struct {
				Connections []struct {
					Name string `json:"name"`
				} `json:"connections"`
			}
			err = json.NewDecoder(resp.Body).Decode(&connz)
			_ = resp.Body.Close()
			for _, c := range connz.Connections {
				if err == nil && c.Name == name {
					found = node.Name
					return true
				}
			}
		}
		return false
	})
	return found
}

// accountMsgs is the number of messages the stream holds for accounts.
func accountMsgs(t *testing.T, js jetstream.JetStream, accounts []string) uint64 {
	t.Helper()
	var sum uint64
	for _, a := range accounts {
		s, err := js.Stream(t.Context(), "CALLCENTER")
		if err != nil {
			return 0
		}
		info, err := s.Info(t.Context(), jetstream.WithSubjectFilter("callcenter."+a+".>"))
		if err != nil {
			return 0
		}
		for _, n := range info.State.Subjects {
			sum += n
		}
	}
	return sum
}
