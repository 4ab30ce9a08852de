package deploy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// rulesFile is the chart's alerting rules, a plain Prometheus rule file that
// `promtool test rules` checks (`make rules`).
var rulesFile = filepath.Join(chartDir, "rules", "callbus.rules.yaml")

// ruleGroups is the part of a Prometheus rule file (and of a PrometheusRule's
// spec) the chart writes; any other field is an error.
type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record      string            `json:"record,omitempty"`
			Alert       string            `json:"alert,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

// prometheusRule is monitoring.coreos.com/v1 PrometheusRule as the chart writes it.
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec ruleGroups `json:"spec"`
}

func readRules(t *testing.T) ruleGroups {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var g ruleGroups
	if err := yaml.UnmarshalStrict(data, &g); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	return g
}

// alerts: the PrometheusRule, when enabled, carries the rule file unchanged
// (Prometheus' {{ $labels }} templates untouched by Helm) and the extra labels.
func (c *check) alerts() {
	if got := len(c.m.PrometheusRules) == 1; got != c.v.PrometheusRule.Enabled {
		c.Fatalf("PrometheusRule rendered %v, want %v", got, c.v.PrometheusRule.Enabled)
	}
	if !c.v.PrometheusRule.Enabled {
		return
	}
	pr := c.m.PrometheusRules[0]
	if want := readRules(c.T); !reflect.DeepEqual(pr.Spec, want) {
		c.Errorf("PrometheusRule spec differs from %s:\n%+v", rulesFile, pr.Spec)
	}
	if pr.Metadata.Namespace != namespace || pr.Metadata.Labels["app.kubernetes.io/name"] != "callbus" {
		c.Errorf("PrometheusRule metadata %+v, want the release's namespace and the chart's labels", pr.Metadata)
	}
}

// Every alert names its severity and a runbook paragraph that the operations page
// has: the anchor of a "### <AlertName>" heading under "Alerts" of docs/operations.md.
func TestAlertsHaveRunbooks(t *testing.T) {
	readme, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
			}
			anchor := "docs/operations.md#" + strings.ToLower(r.Alert)
			if !strings.HasSuffix(r.Annotations["runbook_url"], anchor) {
				t.Errorf("%s: runbook_url %q does not end in %s", r.Alert, r.Annotations["runbook_url"], anchor)
			}
			if !strings.Contains(string(readme), "\n### "+r.Alert+"\n") {
				t.Errorf("docs/operations.md has no runbook heading \"### %s\"", r.Alert)
			}
		}
	}
	if alerts == 0 {
		t.Fatalf("no alert in %s", rulesFile)
	}
}
