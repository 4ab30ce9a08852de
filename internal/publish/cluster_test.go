package publish

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// The relay, unchanged, publishes to an R3 stream of a 3-node cluster across the
// loss of the node leading the stream: nothing lost, nothing twice, in order.
func TestRelayOnAnR3StreamAcrossANodeKill(t *testing.T) {
	c := natstest.StartCluster(t, 3)
	b := &bed{}
	b.setUp(t, c.URLs(), false, 3)
	b.commit(t, 40)
	r := b.relay()
	run(t, r)
	simtest.WaitFor(t, 30*time.Second, "first events out", func() bool { return b.outboxLen(t) == 0 })

	info, err := b.stream.Info(t.Context())
	if err != nil || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream info %+v %v: want an R3 stream", info, err)
	}
	leader := c.NodeIndex(info.Cluster.Leader)
	c.KillNode(leader) // the stream's leader: the stream elects another
	b.commit(t, 40)
	r.Wake()
	// Usually a few seconds. A publish the dying leader never answered, while
	// later ones reached the new leader, makes the relay withdraw those and send
	// them again at once under message ids of their own: nothing waits for the
	// stream's duplicate window (2 minutes here). The bound is for a loaded
	// machine's election.
	drained := time.Minute
	simtest.WaitFor(t, drained, "outbox drained with the leader node down", func() bool { return b.outboxLen(t) == 0 })
	c.RestartNode(t, leader)
	b.commit(t, 20)
	r.Wake()
	simtest.WaitFor(t, drained, "outbox drained after the node rejoined", func() bool { return b.outboxLen(t) == 0 })
	checkInOrder(t, streamMsgs(t, b.stream), 100)
	if d := r.Stats.Duplicates.Load(); d != 0 {
		t.Logf("the stream deduplicated %d retried publishes (Nats-Msg-Id)", d)
	}
}
