package service

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/simtest"
	"github.com/callbus/callbus/internal/testenv"
)

// dashboardFile is the chart's Grafana dashboard (generated in deploy/).
const dashboardFile = "../../deploy/helm/callbus/dashboards/callbus.json"

// A real Prometheus scrapes a real run (the service against a simulator that
// answers some requests with 5xx and bursts of 429s) every second; then every
// query of every panel of the dashboard, with the account variable set to the
// run's account, returns data, and the account variable's query lists it.
func TestDashboardQueriesAgainstPrometheus(t *testing.T) {
	bin := testenv.Program(t, "no prometheus on the PATH (apt-get install prometheus): the dashboard's queries were not run against a real Prometheus", "prometheus")
	// The faults reach the metrics, not only the panels' zero fallback.
	queries := append(dashboardQueries(t), `callbus_api_requests_total{status="429"}`, `callbus_api_requests_total{status=~"5.."}`)
	r := startRunning(t, "prom-1", func(c *sim.Config) {
		c.ErrorRate = 0.03
		c.Burst429Every, c.Burst429Length = 3*time.Second, 200*time.Millisecond
	})
	prom := startPrometheus(t, bin, r.s.HTTPAddr)
	var missing []string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r.advance(t, 5)
		missing = missing[:0]
		for _, q := range queries {
			if !prom.hasData(t, q) {
				missing = append(missing, q)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d dashboard queries return no data after %s:\n%s\nPrometheus log:\n%s",
			len(missing), len(queries), "2m", strings.Join(missing, "\n"), prom.log.String())
	}
	if accounts := prom.get(t, "/api/v1/label/account/values?match[]=callbus_leader"); !strings.Contains(accounts, `"acme"`) {
		t.Errorf("the account variable's query lists %s, want acme", accounts)
	}
}

// dashboardQueries are the expressions of every panel's targets, with Grafana's
// variables replaced as the dashboard would: the run's account and a rate
// interval of a few scrapes.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			expr := strings.NewReplacer("$account", "acme", "$__rate_interval", "10s").Replace(q.Expr)
			out = append(out, expr)
		}
	}
	if len(out) < 10 {
		t.Fatalf("%s has %d queries", dashboardFile, len(out))
	}
	return slices.Compact(out)
}

// prometheus is a prometheus server scraping one target, on a free port.
type prometheus struct {
	url string
	log *simtest.Buffer
}

func startPrometheus(t *testing.T, bin, target string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: callbus\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := simtest.FreeAddr(t)
	p := &prometheus{url: "http://" + addr, log: &simtest.Buffer{}}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	waitFor(t, 30*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(p.url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// get returns the body of an API call, failing the test unless it answers 200.
func (p *prometheus) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(p.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}

// hasData is whether expr, over the last minute, has a series with a number
// (not NaN) in it. A query Prometheus refuses fails the test.
func (p *prometheus) hasData(t *testing.T, expr string) bool {
	t.Helper()
	now := time.Now()
	v := url.Values{"query": {expr}, "start": {fmt.Sprint(now.Add(-time.Minute).Unix())}, "end": {fmt.Sprint(now.Unix())}, "step": {"1"}}
	var res struct {
		Status string
		Data   struct {
			Result []struct {
				Values [][2]any
			}
		}
	}
	body := p.get(t, "/api/v1/query_range?"+v.Encode())
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.Status != "success" {
		t.Fatalf("query %s: %v %s", expr, err, body)
	}
	for _, series := range res.Data.Result {
		for _, sample := range series.Values {
			if s, _ := sample[1].(string); s != "NaN" && s != "" {
				return true
			}
		}
	}
	return false
}
