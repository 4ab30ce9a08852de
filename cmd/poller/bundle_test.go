package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// poller debug bundle of a running poller with debug_pprof on holds every part,
// and no secret: not the API key, the Redis password (of an ACL user, in the
// URL), the NATS password, even where the log file it was given carries one.
func TestDebugBundle(t *testing.T) {
	const redisPW, natsPW = "redis-pw-7f3e9a", "nats-pw-2c8d41"
	b := startBed(t, redistest.Start, 10, usualWorld(0))
	addr := simtest.FreeAddr(t)
	p := startPoller(t, append(b.env("bundle-a", addr), "CALLBUS_DEBUG_PPROF=true"))
	simtest.WaitFor(t, 60*time.Second, "the poller to lead acme", func() bool {
		h, _, _, err := b.store.Leader(t.Context())
		_, ok := fleetStatus(addr)
		return err == nil && strings.HasPrefix(h, "bundle-a/") && ok
	})
	rdb := b.redis.Client(t)
	if err := rdb.Do(t.Context(), "ACL", "SETUSER", "ops", "on", ">"+redisPW, "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logFile := filepath.Join(dir, "poller.log")
	if err := os.WriteFile(logFile, []byte(p.stderr.String()+`{"level":"info","message":"a line that leaked `+natsPW+`"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"CALLBUS_API_URL": b.world.URL, "CALLBUS_API_KEY": procKey, "CALLBUS_ACCOUNT": "acme",
		"CALLBUS_REDIS_URL": "redis://ops:" + redisPW + "@" + b.redis.Addr + "/0", "CALLBUS_NATS_URL": b.nats.URL(),
		"CALLBUS_NATS_USER": "ops", "CALLBUS_NATS_PASSWORD": natsPW, "CALLBUS_HTTP_ADDR": addr, "CALLBUS_DEBUG_PPROF": "true"}
	out := filepath.Join(dir, "bundle.zip")
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"debug", "bundle", "--out", out, "--log", logFile}, env(vars), &stdout, &stderr); err != nil {
		t.Fatal(err, stderr.String())
	}
	z, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	files := map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f.Name, ".gz") {
			gz, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			if data, err = io.ReadAll(gz); err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
		}
		files[f.Name] = data
		for _, secret := range []string{procKey, redisPW, natsPW} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds the secret %q", f.Name, secret)
			}
		}
	}
	want := []string{"version.txt", "config.json", "state.json", "status.json", "metrics.txt", "pprof/goroutine.txt", "pprof/heap.pb.gz",
		"log.txt", "redis/info.txt", "redis/config.json", "nats/stream.json", "problems.txt"}
	for _, n := range want {
		if len(files[n]) == 0 {
			t.Errorf("the bundle lacks %s (has %v); problems: %s", n, slices.Sorted(maps.Keys(files)), files["problems.txt"])
		}
	}
	var states []service.AccountState
	if err := json.Unmarshal(files["state.json"], &states); err != nil || len(states) != 1 || states[0].Lease == nil {
		t.Errorf("state.json: %v %+v", err, states)
	}
	if !bytes.Contains(files["log.txt"], []byte("a line that leaked [REDACTED]")) {
		t.Errorf("the log's secret was not scrubbed to [REDACTED]")
	}
	if !bytes.Contains(files["config.json"], []byte("[REDACTED]")) || !bytes.Contains(files["redis/config.json"], []byte("maxmemory-policy")) {
		t.Errorf("config.json or redis/config.json incomplete:\n%s\n%s", files["config.json"], files["redis/config.json"])
	}
}
