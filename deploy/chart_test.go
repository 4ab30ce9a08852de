package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// chartValues is what the checks read of the values: values.yaml with a ci/ file
// over it (maps merge, as Helm's do for these keys).
type chartValues struct {
	ReplicaCount   int32             `json:"replicaCount"`
	Config         map[string]any    `json:"config"`
	Secret         map[string]string `json:"secret"`
	ExistingSecret struct {
		Name string            `json:"name"`
		Keys map[string]string `json:"keys"`
	} `json:"existingSecret"`
	ServiceMonitor   struct{ Enabled bool } `json:"serviceMonitor"`
	PrometheusRule   struct{ Enabled bool } `json:"prometheusRule"`
	GrafanaDashboard struct {
		Enabled           bool   `json:"enabled"`
		SidecarLabel      string `json:"sidecarLabel"`
		SidecarLabelValue string `json:"sidecarLabelValue"`
	} `json:"grafanaDashboard"`
	NetworkPolicy struct {
		Enabled bool `json:"enabled"`
		Ingress struct {
			From []map[string]any `json:"from"`
		} `json:"ingress"`
		Egress struct {
			Nats  egressValues `json:"nats"`
			Redis egressValues `json:"redis"`
			API   egressValues `json:"api"`
		} `json:"egress"`
	} `json:"networkPolicy"`
	PodDisruptionBudget struct {
		Enabled        bool `json:"enabled"`
		MinAvailable   any  `json:"minAvailable"`
		MaxUnavailable any  `json:"maxUnavailable"`
	} `json:"podDisruptionBudget"`
	PodAntiAffinity           string                    `json:"podAntiAffinity"`
	TopologySpreadConstraints []map[string]any          `json:"topologySpreadConstraints"`
	Accounts                  map[string]map[string]any `json:"accounts"`
	AccountKeysSecret         string                    `json:"accountKeysSecret"`
	ExistingAccountsSecret    string                    `json:"existingAccountsSecret"`
	Nats                      struct {
		CredsSecret struct{ Name, Key string } `json:"credsSecret"`
		TLSCASecret struct{ Name, Key string } `json:"tlsCASecret"`
	} `json:"nats"`
	Resources struct {
		Limits map[string]any `json:"limits"`
	} `json:"resources"`
	Tests struct {
		Enabled bool `json:"enabled"`
	} `json:"tests"`
}

// egressValues is one egress rule of networkPolicy.egress: the ports given beside
// the derived ones.
type egressValues struct {
	Ports []struct {
		Port any `json:"port"`
	} `json:"ports"`
}

func readValues(t *testing.T, file string) chartValues {
	t.Helper()
	var v chartValues
	for _, f := range []string{filepath.Join(chartDir, "values.yaml"), file} {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return v
}

// valuesFiles are the cases: the defaults ("") and every file under ci/.
func valuesFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values files under %s/ci: %v", chartDir, err)
	}
	return append([]string{""}, files...)
}

func caseName(file string) string {
	if file == "" {
		return "default"
	}
	return strings.TrimSuffix(filepath.Base(file), ".yaml")
}

// Every rendering decodes strictly into the API types and keeps the chart's
// promises, checked against the values it was rendered with.
func TestRender(t *testing.T) {
	for _, file := range valuesFiles(t) {
		t.Run(caseName(file), func(t *testing.T) {
			out := render(t, file)
			m, err := decode(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			v := readValues(t, file)
			c := &check{T: t, v: v, m: m, out: out}
			c.objects()
			c.hardened()
			c.probes()
			c.config()
			c.secrets()
			c.availability()
			c.monitoring()
			c.alerts()
			c.dashboard()
			c.labels()
			c.memoryLimit()
			c.fleet()
			c.natsFiles()
			c.egress()
			c.spread()
			c.helmTest()
		})
	}
}

// What each values file is for, stated rather than derived from the values.
func TestRenderCases(t *testing.T) {
	tests := []struct {
		file            string
		replicas        int32
		pdb, monitor    bool
		existingSecret  string
		hardSpread      bool // replicas required, not preferred, on different nodes
		noAnti          bool // podAntiAffinity none
		accounts        int  // accounts in the chart's accounts Secret
		accountsSecrets int  // Secrets rendered beside existingSecret: the accounts'
	}{
		{"", 2, true, false, "", false, false, 0, 0},
		{"ci/minimal.yaml", 1, false, false, "", false, false, 0, 0},
		{"ci/existing-secret.yaml", 2, true, false, "callbus-credentials", false, false, 0, 0},
		{"ci/monitoring.yaml", 2, true, true, "", true, false, 0, 0},
		{"ci/fleet.yaml", 5, true, false, "callbus-credentials", false, true, 3, 1},
		{"ci/fleet-existing-secret.yaml", 3, true, false, "callbus-credentials", false, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(caseName(tt.file), func(t *testing.T) {
			file := tt.file
			if file != "" {
				file = filepath.Join(chartDir, file)
			}
			m, err := decode(render(t, file))
			if err != nil {
				t.Fatal(err)
			}
			d := m.Deployments[0]
			if got := *d.Spec.Replicas; got != tt.replicas {
				t.Errorf("replicas %d, want %d", got, tt.replicas)
			}
			if got := len(m.PodDisruptionBudget) == 1; got != tt.pdb {
				t.Errorf("PodDisruptionBudget rendered %v, want %v", got, tt.pdb)
			}
			if got := len(m.ServiceMonitors) == 1; got != tt.monitor {
				t.Errorf("ServiceMonitor rendered %v, want %v", got, tt.monitor)
			}
			var anti *corev1.PodAntiAffinity
			if aff := d.Spec.Template.Spec.Affinity; aff != nil {
				anti = aff.PodAntiAffinity
			}
			if tt.noAnti != (anti == nil) {
				t.Errorf("pod anti-affinity %+v, want none %v", anti, tt.noAnti)
			} else if !tt.noAnti && ((len(anti.RequiredDuringSchedulingIgnoredDuringExecution) > 0) != tt.hardSpread ||
				(len(anti.PreferredDuringSchedulingIgnoredDuringExecution) > 0) == tt.hardSpread) {
				t.Errorf("pod anti-affinity %+v, want hard %v", anti, tt.hardSpread)
			}
			if tt.accounts > 0 && (len(m.Secrets) == 0 || len(m.Secrets[0].Data) != tt.accounts) {
				t.Errorf("accounts Secret %+v, want %d accounts", m.Secrets, tt.accounts)
			}
			var secretName string
			for _, vol := range d.Spec.Template.Spec.Volumes {
				if vol.Name == "secrets" && vol.Secret != nil { // the chart's, not an extra volume
					secretName = vol.Secret.SecretName
				}
			}
			switch {
			case tt.existingSecret != "" && (secretName != tt.existingSecret || len(m.Secrets) != tt.accountsSecrets):
				t.Errorf("secret volume of %q and %d Secrets rendered; want %q and none", secretName, len(m.Secrets), tt.existingSecret)
			case tt.existingSecret == "" && tt.file != "" && secretName != release+"-callbus":
				t.Errorf("secret volume of %q, want the chart's %s-callbus", secretName, release)
			}
		})
	}
}

func TestLint(t *testing.T) {
	for _, file := range valuesFiles(t) {
		t.Run(caseName(file), func(t *testing.T) {
			args := []string{"lint", chartDir, "--strict", "--kube-version", kubeVersion}
			if file != "" {
				args = append(args, "--values", file)
			}
			helm(t, args...)
		})
	}
}

// refusal is a set of values the chart must refuse, and what helm's error then
// names.
type refusal struct {
	name string
	set  []string
	want string
}

// refuses renders the chart with each refusal's values (--set) and wants helm
// to fail with a message that names the problem.
func refuses(t *testing.T, tests []refusal) {
	t.Helper()
	bin := helmBinary(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"template", release, chartDir, "--kube-version", kubeVersion}
			for _, s := range tt.set {
				args = append(args, "--set", s)
			}
			out, err := runHelm(bin, args...)
			if err == nil {
				t.Fatalf("helm %s rendered; want an error", strings.Join(args, " "))
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("error does not name %s:\n%s", tt.want, out)
			}
		})
	}
}

// Values the chart must refuse, by its schema or its own checks, with a message
// that names the problem.
func TestRenderRefuses(t *testing.T) {
	tests := []refusal{
		{"secure key in config", []string{"config.api_key=k"}, "api_key"},
		{"chart-owned key in config", []string{"config.instance_id=x"}, "instance_id"},
		{"unknown top-level key", []string{"replicas=2"}, "replicas"},
		{"bad setting", []string{"config.stream_replicas=9"}, "stream_replicas"},
		{"both secret and existingSecret", []string{"secret.api_key=k", "existingSecret.name=s"}, "existingSecret.name"},
		{"existingSecret without the API key's key", []string{"existingSecret.name=s", "existingSecret.keys.api_key="}, "existingSecret.keys.api_key"},
		{"grace period within the shutdown timeout", []string{"config.shutdown_timeout_seconds=40", "terminationGracePeriodSeconds=30"}, "terminationGracePeriodSeconds"},
	}
	refuses(t, tests)
}

// The chart's README documents every value of values.yaml: each top-level key, and
// each key of the chart's own (closed) objects.
func TestReadmeDocumentsValues(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	// Objects whose keys are Kubernetes' or the settings' (documented elsewhere).
	open := []string{"config", "resources", "podSecurityContext", "securityContext", "affinity",
		"nodeSelector", "podAnnotations", "podLabels"}
	for key, val := range values {
		if !strings.Contains(string(readme), "`"+key) {
			t.Errorf("README.md does not document %s", key)
		}
		children, ok := val.(map[string]any)
		if !ok || slices.Contains(open, key) {
			continue
		}
		for child := range children {
			if !strings.Contains(string(readme), "`"+key+"."+child) {
				t.Errorf("README.md does not document %s.%s", key, child)
			}
		}
	}
}
