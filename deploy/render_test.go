package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const (
	chartDir = "helm/callbus"
	// kubeVersion is the cluster version the chart is rendered for: explicit, so
	// that the result does not depend on how the helm binary was built (one built
	// with plain `go install` believes it talks to Kubernetes 1.20).
	kubeVersion = "1.30.0"
	release     = "cb"
	namespace   = "telephony"
)

// helmBinary finds helm: $HELM, then the PATH, then ../bin/helm (where the README's
// install command puts it). Without one the test is skipped, or fails when
// CALLBUS_REQUIRE_INTEGRATION=1 (CI).
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	if h, err := filepath.Abs("../bin/helm"); err == nil {
		if _, err := os.Stat(h); err == nil {
			return h
		}
	}
	msg := "helm not found ($HELM, PATH, ../bin/helm): GOBIN=$PWD/bin go install helm.sh/helm/v3/cmd/helm@v3.22.0"
	if os.Getenv("CALLBUS_REQUIRE_INTEGRATION") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// helm runs helm with args in this directory and returns its standard output.
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// runHelm runs bin with args and returns its output, standard and error, for
// commands expected to fail.
func runHelm(bin string, args ...string) (string, error) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// render is `helm template` of the chart with the values file (none: the defaults).
func render(t *testing.T, valuesFile string) []byte {
	t.Helper()
	args := []string{"template", release, chartDir, "--namespace", namespace, "--kube-version", kubeVersion}
	if valuesFile != "" {
		args = append(args, "--values", valuesFile)
	}
	return helm(t, args...)
}

// manifests are the rendered objects, decoded into their API types.
type manifests struct {
	Deployments         []appsv1.Deployment
	ConfigMaps          []corev1.ConfigMap
	Secrets             []corev1.Secret
	Services            []corev1.Service
	ServiceAccounts     []corev1.ServiceAccount
	PodDisruptionBudget []policyv1.PodDisruptionBudget
	NetworkPolicies     []networkingv1.NetworkPolicy
	ServiceMonitors     []serviceMonitor
	PrometheusRules     []prometheusRule
	DashboardMaps       []corev1.ConfigMap // the Grafana dashboard's, apart from the settings'
	Pods                []corev1.Pod       // the `helm test` hook's
}

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the chart
// writes; any other field is an error.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

var separator = regexp.MustCompile(`(?m)^---\s*$`)

// decode splits helm's output into documents and decodes each strictly (unknown
// or duplicate fields are errors) by its apiVersion and kind.
func decode(out []byte) (manifests, error) {
	var m manifests
	for i, doc := range separator.Split(string(out), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return m, fmt.Errorf("document %d: %w", i, err)
		}
		var err error
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			m.Deployments, err = appendStrict(m.Deployments, doc)
		case "v1 ConfigMap":
			if strings.Contains(doc, "-dashboard\n") {
				m.DashboardMaps, err = appendStrict(m.DashboardMaps, doc)
			} else {
				m.ConfigMaps, err = appendStrict(m.ConfigMaps, doc)
			}
		case "v1 Pod":
			m.Pods, err = appendStrict(m.Pods, doc)
		case "v1 Secret":
			m.Secrets, err = appendStrict(m.Secrets, doc)
		case "v1 Service":
			m.Services, err = appendStrict(m.Services, doc)
		case "v1 ServiceAccount":
			m.ServiceAccounts, err = appendStrict(m.ServiceAccounts, doc)
		case "policy/v1 PodDisruptionBudget":
			m.PodDisruptionBudget, err = appendStrict(m.PodDisruptionBudget, doc)
		case "networking.k8s.io/v1 NetworkPolicy":
			m.NetworkPolicies, err = appendStrict(m.NetworkPolicies, doc)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			m.ServiceMonitors, err = appendStrict(m.ServiceMonitors, doc)
		case "monitoring.coreos.com/v1 PrometheusRule":
			m.PrometheusRules, err = appendStrict(m.PrometheusRules, doc)
		default:
			err = errors.New("unexpected kind (add it to decode)")
		}
		if err != nil {
			return m, fmt.Errorf("document %d (%s %s): %w", i, head.APIVersion, head.Kind, err)
		}
	}
	return m, nil
}

func appendStrict[T any](list []T, doc string) ([]T, error) {
	var v T
	if err := yaml.UnmarshalStrict([]byte(doc), &v); err != nil {
		return list, err
	}
	return append(list, v), nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func TestDecodeIsStrict(t *testing.T) {
	tests := []struct {
		name, doc string
		ok        bool
	}{
		{"known fields", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  K: v\n", true},
		{"comment only", "# Source: x\n", true},
		{"unknown field", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndatum:\n  K: v\n", false},
		{"misplaced field", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 1\n  containers: []\n", false},
		{"duplicate field", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n", false},
		{"unknown kind", "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: a\n", false},
		{"unknown ServiceMonitor field", "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nspec:\n  jobLabel: x\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode([]byte("---\n" + tt.doc))
			if (err == nil) != tt.ok {
				t.Errorf("got error %v, want ok %v", err, tt.ok)
			}
		})
	}
}
