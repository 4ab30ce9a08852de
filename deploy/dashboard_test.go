package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The chart's dashboard is the one Dashboard builds (`go test -update` or
// `go run ./cmd/dashboard` in deploy/ rewrites it).
func TestDashboardUpToDate(t *testing.T) {
	want, err := Dashboard()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(DashboardFile)
	if err != nil && !*update {
		t.Fatalf("%v: run `go run ./cmd/dashboard` in deploy/", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	if *update {
		if err := os.WriteFile(DashboardFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale: run `go run ./cmd/dashboard` in deploy/", DashboardFile)
}

// grafanaDashboard is the part of the dashboard JSON the checks read.
type grafanaDashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name, Type string
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			Type, UID string
		} `json:"datasource"`
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
	} `json:"panels"`
}

// Every panel queries the chosen Prometheus, filters on the chosen accounts and
// groups by account; every metric it names is one callbus exports; and the
// promised views are there.
func TestDashboardPanels(t *testing.T) {
	b, err := Dashboard()
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID != DashboardUID || len(d.Templating.List) != 2 || d.Templating.List[0].Type != "datasource" || d.Templating.List[1].Name != "account" {
		t.Fatalf("dashboard %q %q with variables %+v, want datasource and account", d.UID, d.Title, d.Templating.List)
	}
	metric := regexp.MustCompile(`callbus_[a-z_]+`)
	var titles []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		titles = append(titles, p.Title)
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %+v, %d targets", p.Title, p.Datasource, len(p.Targets))
		}
		for _, q := range p.Targets {
			if !strings.Contains(q.Expr, acct) || !strings.Contains(q.Expr, "by (account") || q.RefID == "" {
				t.Errorf("panel %q: %q (ref %q) does not filter and group by account", p.Title, q.Expr, q.RefID)
			}
			for _, m := range metric.FindAllString(q.Expr, -1) {
				if !strings.Contains(readmeMetrics(t), "`"+strings.TrimSuffix(m, "_bucket")+"`") {
					t.Errorf("panel %q: %s is not in the metrics table of docs/operations.md", p.Title, m)
				}
			}
		}
	}
	all := strings.Join(titles, "|")
	for _, want := range []string{"Leader", "Effective vs target", "Budget used vs share", "X-RateLimit-Remaining", "429s and 5xx",
		"Outbox depth", "Relay lag", "Detection delay percentiles", "Events a minute per type", "Rejected records"} {
		if !strings.Contains(all, want) {
			t.Errorf("no panel %q among %s", want, all)
		}
	}
}

// readmeMetrics is the Observability section of docs/operations.md.
func readmeMetrics(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "## Observability")
	if start < 0 {
		t.Fatal("docs/operations.md has no Observability section")
	}
	return s[start:]
}

// dashboard: the ConfigMap, when enabled, carries the dashboard file unchanged
// under the sidecar's label.
func (c *check) dashboard() {
	v := c.v.GrafanaDashboard
	if got := len(c.m.DashboardMaps) == 1; got != v.Enabled {
		c.Fatalf("dashboard ConfigMap rendered %v, want %v", got, v.Enabled)
	}
	if !v.Enabled {
		return
	}
	cm := c.m.DashboardMaps[0]
	want, err := os.ReadFile(DashboardFile)
	if err != nil {
		c.Fatal(err)
	}
	if cm.Data["callbus.json"] != strings.TrimSuffix(string(want), "\n") {
		c.Errorf("ConfigMap %s does not hold %s as it is", cm.Name, DashboardFile)
	}
	if cm.Labels[v.SidecarLabel] != v.SidecarLabelValue || cm.Namespace != namespace {
		c.Errorf("ConfigMap labels %v in %q, want %s=%q in %s", cm.Labels, cm.Namespace, v.SidecarLabel, v.SidecarLabelValue, namespace)
	}
}
