package simtest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/secret"
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

// Accounts serves each account at its own base URL with its own key, and reads
// each account's truth, built or not.
func TestAccounts(t *testing.T) {
	a := NewAccounts(t, 3, func(_ int, _ string, c *sim.Config) { c.CallRate = 30 })
	start := a.Clock.Now()
	a.Run(t, 600)
	WaitFor(t, 30*time.Second, "ten simulated minutes", func() bool { return a.Clock.Now().Sub(start) >= 10*time.Minute })
	ctx := context.Background()
	c, err := callcenter.New(a.BaseURL("acct002"), secret.New(AccountKey("acct002")))
	if err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, "a call in acct002", func() bool {
		p, err := c.ListCalls(ctx, callcenter.ListCallsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Items) > 0
	})
	if got := a.Built(); got != 1 {
		t.Errorf("built %d worlds, want 1", got)
	}
	if tr := a.ReadTruth(t, "acct002"); len(tr.Calls) == 0 {
		t.Error("acct002's truth has no calls")
	}
	if tr := a.ReadTruth(t, "acct003"); len(tr.Calls) == 0 {
		t.Error("acct003's truth, read without a request, has no calls")
	}
}
