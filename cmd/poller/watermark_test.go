package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/callbus/callbus/internal/testkit/testenv"
)

// rulesFile is the chart's alerting rules.
const rulesFile = "../../deploy/helm/callbus/rules/callbus.rules.yaml"

// A poller process frozen with SIGSTOP publishes no watermark, and the
// expression of the CallbusWatermarkStalled alert, evaluated by a real
// Prometheus that scraped the poller, fires for its account (the process's
// scrapes fail meanwhile); after SIGCONT the watermarks come again and the
// expression clears.
func TestWatermarkStallsWhenFrozen(t *testing.T) {
	prom := testenv.Program(t, "no prometheus on the PATH (apt-get install prometheus): the watermark alert was not evaluated", "prometheus")
	expr := alertExpr(t, "CallbusWatermarkStalled")
	b := startBed(t, redistest.Start, 20, usualWorld(0))
	js := b.stream(t)
	addr := simtest.FreeAddr(t)
	// The default intervals, so the rate budget is not short: a watermark
	// waits for the cycle under way, which would wait for the budget.
	p := startPoller(t, append(configDefaults(b.env("frozen-1", addr)), "CALLBUS_WATERMARK_INTERVAL_SECONDS=1"))
	q := startProm(t, prom, addr)
	simtest.WaitFor(t, 60*time.Second, "Prometheus to scrape a watermark", func() bool {
		time.Sleep(200 * time.Millisecond)
		return len(q.query(t, `callbus_watermark_published_timestamp_seconds{account="acme"}`)) > 0
	})
	if got := q.query(t, expr); len(got) > 0 {
		t.Fatalf("the alert's expression fires on a running poller: %v", got)
	}
	const wm = "callcenter.acme.account.watermark"
	before := subjectCount(t, js, wm)
	p.signal(syscall.SIGSTOP)
	stopped := time.Now()
	defer p.signal(syscall.SIGCONT)
	simtest.WaitFor(t, 3*time.Minute, "the alert's expression to fire for acme", func() bool {
		time.Sleep(time.Second)
		return strings.Contains(strings.Join(q.query(t, expr), " "), `"acme"`)
	})
	t.Logf("the alert's expression fired %s after SIGSTOP", time.Since(stopped).Round(time.Second))
	// A relay batch in flight at SIGSTOP may land one more; none after.
	if n := subjectCount(t, js, wm); n > before+1 {
		t.Errorf("%d watermarks published while frozen", n-before)
	}
	p.signal(syscall.SIGCONT)
	frozen := subjectCount(t, js, wm)
	simtest.WaitFor(t, 90*time.Second, "watermarks again after SIGCONT and the expression to clear", func() bool {
		time.Sleep(time.Second)
		return subjectCount(t, js, wm) > frozen+2 && len(q.query(t, expr)) == 0
	})
}

// alertExpr reads the expression of alert from the chart's rule file (a
// folded block after "expr: |").
func alertExpr(t *testing.T, alert string) string {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "- alert: "+alert+"\n")
	_, rest, ok2 := strings.Cut(rest, "expr: |\n")
	block, _, ok3 := strings.Cut(rest, "\n        for:")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("%s: no expression block of %s", rulesFile, alert)
	}
	return strings.TrimSpace(block)
}

// promServer is a Prometheus scraping one target every second.
type promServer struct{ url string }

func startProm(t *testing.T, bin, target string) *promServer {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: callbus\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := simtest.FreeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	log := &simtest.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus:\n%s", log.String())
		}
	})
	p := &promServer{url: "http://" + addr}
	simtest.WaitFor(t, 30*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(p.url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// query evaluates expr now and returns each series' labels as JSON.
func (p *promServer) query(t *testing.T, expr string) []string {
	t.Helper()
	resp, err := http.Get(p.url + "/api/v1/query?" + url.Values{"query": {expr}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Status string
		Data   struct {
			Result []struct{ Metric json.RawMessage }
		}
	}
	if err := json.Unmarshal(body, &res); err != nil || res.Status != "success" {
		t.Fatalf("query %s: %v %s", expr, err, body)
	}
	var out []string
	for _, r := range res.Data.Result {
		out = append(out, string(r.Metric))
	}
	return out
}
