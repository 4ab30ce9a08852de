package simtest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

func TestBuffer(t *testing.T) {
	var b Buffer
	if b.Lines() != nil {
		t.Fatalf("empty buffer: %q", b.Lines())
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { fmt.Fprintf(&b, "line %d\n", i) })
	}
	wg.Wait()
	if got := b.Lines(); len(got) != 4 || len(b.Bytes()) != len(b.String()) {
		t.Fatalf("Lines = %q, Bytes %q", got, b.Bytes())
	}
}

func TestWaitForAndFreeAddr(t *testing.T) {
	n := 0
	WaitFor(t, time.Minute, "the third look", func() bool { n++; return n == 3 })
	l, err := net.Listen("tcp", FreeAddr(t))
	if err != nil {
		t.Fatalf("listen on the free address: %v", err)
	}
	l.Close()
}

func TestWorld(t *testing.T) {
	w := NewWorld(t, sim.Config{Seed: 1, Agents: 4, CallRate: 30, APIKey: "k"})
	start := w.Clock.Now()
	w.Run(t, 600)
	WaitFor(t, time.Minute, "the clock to move", func() bool { return w.Clock.Now().Sub(start) > 5*time.Minute })
	w.Freeze()
	w.Freeze() // idempotent
	frozen := w.Clock.Now()
	truth := w.ReadTruth(t)
	if len(truth.Calls) == 0 || w.Clock.Now() != frozen {
		t.Fatalf("%d calls in the truth after %s; clock moved after Freeze: %v", len(truth.Calls), frozen.Sub(start), w.Clock.Now() != frozen)
	}
	if w.URL == "" {
		t.Fatal("no URL")
	}
}
