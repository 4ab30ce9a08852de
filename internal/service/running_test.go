package service

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/rs/zerolog"
)

// served is the whole service against the simulator on a manual clock (its
// config changed by tweak, when not nil), with real Redis and NATS, serving HTTP
// on a free loopback port. It stops with the test.
type served struct {
	*running
	s config.Settings
}

func startRunning(t *testing.T, instance string, tweak func(*sim.Config)) *served {
	t.Helper()
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	w := newWorld(t, tweak)
	set := testSettings(w, ns.URL(), rs.URL, instance)
	set.HTTPAddr = simtest.FreeAddr(t)
	set.WatermarkInterval = time.Second                     // the dashboard's watermark panel has data
	log := zerolog.New(io.Discard).Level(zerolog.WarnLevel) // warnings reach the status page's hook
	r := &served{running: start(t, w, set, log), s: set}
	t.Cleanup(func() { r.stop(t) })
	return r
}

// get returns the body of GET path on the service's HTTP address with accept as
// its Accept header, failing the test on a transport error or a status other than
// 200.
func (r *served) get(t *testing.T, path, accept string) string {
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
