package natstest

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestStartRestart(t *testing.T) {
	s := Start(t)
	url := s.URL()
	nc := s.Conn(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(t.Context()); err != nil {
		t.Fatalf("jetstream not enabled: %v", err)
	}
	s.Restart(t)
	if s.URL() != url {
		t.Fatalf("restart moved the server: got %s want %s", s.URL(), url)
	}
}

// An R3 stream keeps taking and serving messages while one node is down, and the
// node rejoins.
func TestClusterSurvivesANodeKill(t *testing.T) {
	c := StartCluster(t, 3)
	js, err := jetstream.New(c.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"}, Replicas: 3}); err != nil {
		t.Fatalf("create R3 stream: %v", err)
	}
	sent := 0
	publish := func(n int) {
		for range n {
			sent++
			id := fmt.Sprint(sent)
			// A stream leader lost with the node takes an election: retry under the
			// same message id, as a producer would (deduplicated by the stream).
			var err error
			for attempt := 0; attempt < 30; attempt++ {
				if _, err = js.Publish(ctx, "r3.x", []byte(id), jetstream.WithMsgID(id)); err == nil {
					break
				}
			}
			if err != nil {
				t.Fatalf("publish %s: %v", id, err)
			}
		}
	}
	publish(5)
	c.KillNode(0)
	publish(5)
	c.RestartNode(t, 0)
	publish(5)
	s, err := js.Stream(ctx, "R3")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 15 || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream info %+v %v, want 15 messages on 3 nodes", info, err)
	}
}
