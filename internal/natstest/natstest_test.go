package natstest

import (
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
