package service

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/callbus/callbus/internal/testkit/testenv"
	"github.com/chromedp/chromedp"
)

// dashboardFile is the chart's Grafana dashboard (generated in deploy/).
const dashboardFile = "../../deploy/helm/callbus/dashboards/callbus.json"

// A real Prometheus scrapes a real run (the service against a simulator that
// answers some requests with 5xx and bursts of 429s) every second; then every
// query of every panel of the dashboard, with the account variable set to the
// run's account, returns data, and the account variable's query lists it.
func TestDashboardQueriesAgainstPrometheus(t *testing.T) {
	bin := testenv.Program(t, "no prometheus on the PATH (apt-get install prometheus): the dashboard's queries were not run against a real Prometheus", "prometheus")
	rows := readDashboard(t)
	// The faults reach the metrics, not only the panels' zero fallback.
	exprs := append(queries(t, rows), `callbus_api_requests_total{status="429"}`, `callbus_api_requests_total{status=~"5.."}`)
	r := startRunning(t, "prom-1", func(c *sim.Config) {
		c.ErrorRate = 0.03
		c.Burst429Every, c.Burst429Length = 3*time.Second, 200*time.Millisecond
	})
	prom := startPrometheus(t, bin, r.s.HTTPAddr, consolePage(rows))
	var missing []string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r.advance(t, 5)
		missing = missing[:0]
		for _, q := range exprs {
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
			len(missing), len(exprs), "2m", strings.Join(missing, "\n"), prom.log.String())
	}
	prom.screenshot(t, rows)
	if accounts := prom.get(t, "/api/v1/label/account/values?match[]=callbus_leader"); !strings.Contains(accounts, `"acme"`) {
		t.Errorf("the account variable's query lists %s, want acme", accounts)
	}
}

// dashboardRow is a row of the dashboard with its panels and their queries,
// Grafana's variables replaced as the dashboard would: the run's account and a
// rate interval of a few scrapes.
type dashboardRow struct {
	title  string
	panels []dashboardPanel
}

type dashboardPanel struct {
	title   string
	targets []struct{ expr, legend string }
}

// readDashboard reads the chart's dashboard file: panels follow their row.
func readDashboard(t *testing.T) []dashboardRow {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr, LegendFormat string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$account", "acme", "$__rate_interval", "10s")
	rows := []dashboardRow{{title: d.Panels[0].Title}}
	for _, p := range d.Panels[1:] {
		if p.Type == "row" {
			rows = append(rows, dashboardRow{title: p.Title})
			continue
		}
		pn := dashboardPanel{title: p.Title}
		for _, q := range p.Targets {
			pn.targets = append(pn.targets, struct{ expr, legend string }{vars.Replace(q.Expr), q.LegendFormat})
		}
		rows[len(rows)-1].panels = append(rows[len(rows)-1].panels, pn)
	}
	return rows
}

// queries are every panel's expressions.
func queries(t *testing.T, rows []dashboardRow) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		for _, p := range r.panels {
			for _, q := range p.targets {
				out = append(out, q.expr)
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("%s has %d queries", dashboardFile, len(out))
	}
	return out
}

// prometheus is a prometheus server scraping one target, on a free port.
type prometheus struct {
	url string
	log *simtest.Buffer
}

// startPrometheus starts bin scraping target every second, serving console as
// /consoles/dashboard.html.
func startPrometheus(t *testing.T, bin, target, console string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	consoles := filepath.Join(dir, "consoles")
	if err := os.Mkdir(consoles, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(consoles, "dashboard.html"), []byte(console), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: callbus\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := simtest.FreeAddr(t)
	p := &prometheus{url: "http://" + addr, log: &simtest.Buffer{}}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn", "--web.console.templates="+consoles, "--web.console.libraries="+consoles)
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

// screenshot shows the dashboard in headless Chromium as Prometheus' own
// console page draws it (Grafana, AGPL, is not run here): a title per row, a
// graph per panel with all its queries and legends, over the run's data. Saved as
// CALLBUS_DASHBOARD_SCREENSHOT-dashboard.png when that variable names a path
// prefix.
func (p *prometheus) screenshot(t *testing.T, rows []dashboardRow) {
	t.Helper()
	if os.Getenv("CALLBUS_DASHBOARD_SCREENSHOT") == "" {
		return
	}
	ctx := testenv.Browser(t, "the dashboard was not seen in a browser", 1400, 900)
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, chromedp.Navigate(p.url+"/consoles/dashboard.html"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll(".rickshaw_graph svg, .prom_graph_error").length >= `+fmt.Sprint(countPanels(rows)))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.errs.join("\\n") + "\\n" + document.body.innerText.slice(0, 300)`))
		t.Fatalf("open the dashboard's console page: %v\npage: %s\nPrometheus log: %s", err, text, p.log.String())
	}
	testenv.Screenshot(t, ctx, "CALLBUS_DASHBOARD_SCREENSHOT", "dashboard")
}

// consolePage is a Prometheus console page with the dashboard's panels, drawn by
// prom_console.js (Rickshaw) from the assets of Debian's prometheus package.
func consolePage(rows []dashboardRow) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>callbus</title>
<script>window.errs = []; window.onerror = function (m) { window.errs.push(m); };</script>
<link rel="stylesheet" href="/classic/static/bootstrap4/css/bootstrap.min.css">
<link rel="stylesheet" href="/classic/static/rickshaw/rickshaw.min.css">
<link rel="stylesheet" href="/classic/static/css/prom_console.css">
<script src="/classic/static/d3/d3.min.js"></script>
<script src="/classic/static/rickshaw/rickshaw.min.js"></script>
<script src="/classic/static/jquery/jquery.min.js"></script>
<script>var PATH_PREFIX = "";</script>
<script src="/classic/static/js/prom_console.js"></script>
<style>body{padding:8px 16px} .panel{display:inline-block;vertical-align:top;width:640px;margin:0 16px 16px 0} h5{font-size:14px;margin:4px 0}</style>
</head><body><h3>callbus (dashboard preview, account acme)</h3>
`)
	n := 0
	for _, r := range rows {
		fmt.Fprintf(&b, "<h4>%s</h4>\n", html.EscapeString(r.title))
		for _, pn := range r.panels {
			n++
			exprs, names := make([]string, len(pn.targets)), make([]string, len(pn.targets))
			for i, q := range pn.targets {
				exprs[i], names[i] = q.expr, strings.NewReplacer("{{", "[[", "}}", "]]").Replace(q.legend)
			}
			e, _ := json.Marshal(exprs)
			nm, _ := json.Marshal(names)
			fmt.Fprintf(&b, `<div class="panel"><h5>%s</h5><div id="g%d"></div></div>
<script>new PromConsole.Graph({node: document.querySelector("#g%d"), expr: %s, name: %s, duration: 20, width: 560, height: 160,
yAxisFormatter: PromConsole.NumberFormatter.humanize, yHoverFormatter: PromConsole.NumberFormatter.humanize});</script>
`, html.EscapeString(pn.title), n, n, e, nm)
		}
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

func countPanels(rows []dashboardRow) int {
	n := 0
	for _, r := range rows {
		n += len(r.panels)
	}
	return n
}
