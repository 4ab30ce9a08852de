package service

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/simtest"
	"github.com/rs/zerolog"
)

// running is the whole service against the simulator on a manual clock (its
// config changed by tweak, when not nil), with
// real Redis and NATS, serving HTTP on a free loopback port. It stops with the
// test.
type running struct {
	w *world
	s config.Settings
	c *cycles
}

func startRunning(t *testing.T, instance string, tweak func(*sim.Config)) *running {
	t.Helper()
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	r := &running{w: newWorld(t, tweak), c: &cycles{n: map[string]int{}}}
	r.s = testSettings(r.w, ns.URL(), rs.URL, instance)
	r.s.HTTPAddr = simtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := zerolog.New(io.Discard).Level(zerolog.WarnLevel) // warnings reach the status page's hook
	go func() { done <- Run(ctx, r.s, log, Options{PollHooks: poll.Hooks{Cycle: r.c.hook}}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service: %v", err)
		}
	})
	return r
}

// advance lets n calls cycles complete, moving the simulated world 10 s after
// each, so that calls, participants and metrics change and events flow.
func (r *running) advance(t *testing.T, n int) {
	t.Helper()
	for range n {
		before := r.c.snapshot()[poll.ResCalls]
		waitFor(t, 30*time.Second, "a calls cycle", func() bool { return r.c.snapshot()[poll.ResCalls] > before })
		r.w.sim.Advance(10 * time.Second)
	}
}

// get returns the body of GET path on the service's HTTP address with accept as
// its Accept header, failing the test on a transport error or a status other than
// 200.
func (r *running) get(t *testing.T, path, accept string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+r.s.HTTPAddr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}
