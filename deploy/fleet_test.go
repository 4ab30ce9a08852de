package deploy

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/iparams"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// renderSet is `helm template` of the chart in dir with --set values, decoded.
func renderSet(t *testing.T, dir string, set ...string) manifests {
	t.Helper()
	args := []string{"template", release, dir, "--namespace", namespace, "--kube-version", kubeVersion}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	m, err := decode(helm(t, args...))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// GOMEMLIMIT is 90% of the memory limit in bytes, rounded down, for every form of
// quantity the chart accepts: the same figure as Kubernetes' own reading of it.
func TestGoMemLimit(t *testing.T) {
	for _, limit := range []string{"256Mi", "1Gi", "1.5Gi", "0.5Gi", "512M", "2G", "1T", "100Ki", "268435456", "1000000001", "750k", "3Ti"} {
		t.Run(limit, func(t *testing.T) {
			m := renderSet(t, chartDir, "resources.limits.memory="+limit)
			want := resource.MustParse(limit)
			e := env(m.Deployments[0].Spec.Template.Spec.Containers[0], "GOMEMLIMIT")
			if e == nil || e.Value != strconv.FormatInt(want.Value()*9/10, 10) {
				t.Errorf("GOMEMLIMIT %+v, want %d (90%% of %d bytes)", e, want.Value()*9/10, want.Value())
			}
		})
	}
	m := renderSet(t, chartDir, "resources.limits=null")
	if e := env(m.Deployments[0].Spec.Template.Spec.Containers[0], "GOMEMLIMIT"); e != nil {
		t.Errorf("GOMEMLIMIT %+v without a memory limit", e)
	}
	m = renderSet(t, chartDir, "extraEnv[0].name=GOMEMLIMIT", "extraEnv[0].value=300MiB")
	var n int
	for _, e := range m.Deployments[0].Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GOMEMLIMIT" {
			n++
			if e.Value != "300MiB" {
				t.Errorf("GOMEMLIMIT %q, want extraEnv's 300MiB", e.Value)
			}
		}
	}
	if n != 1 {
		t.Errorf("GOMEMLIMIT set %d times, want once (extraEnv's)", n)
	}
}

// The NetworkPolicy's egress ports are those of the configured URLs: Redis on 6380
// gets 6380 (and not the usual 6379), every NATS URL its own port, an API on 8443
// its port, ports given are added.
func TestEgressPortsDerived(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		rule int // egress rule: 1 nats, 2 redis, 3 api (0 is DNS)
		want []string
	}{
		{"redis on 6380", []string{"config.redis_url=rediss://redis.redis:6380/0"}, 2, []string{"6380"}},
		{"redis default port", []string{"config.redis_url=redis://redis.redis/0"}, 2, []string{"6379"}},
		{"redis with a password in the URL", []string{"config.redis_url=redis://:pw@[fd00::1]:7000/1"}, 2, []string{"7000"}},
		{"redis default URL", nil, 2, []string{"6379"}},
		{"nats cluster", []string{`config.nats_url=nats://a:4222\,nats://b:4223\,wss://c`}, 1, []string{"4222", "4223", "443"}},
		{"api on 8443", []string{"config.api_url=https://api.example.com:8443"}, 3, []string{"8443"}},
		{"api domain", []string{"config.api_domain=acme"}, 3, []string{"443"}},
		{"accounts' APIs", []string{"accounts.a.api_url=http://sim:8080", "accounts.a.api_key=k", "accounts.b.api_domain=b",
			"accounts.b.api_key=k"}, 3, []string{"443", "8080"}},
		{"redis cluster", []string{`config.redis_cluster_addrs=r0:6380\,r1:6381\, r2:6380`}, 2, []string{"6380", "6381"}},
		{"redis sentinels", []string{`config.redis_sentinel_addrs=s0:26379\,s1:26379`, "config.redis_sentinel_master=m",
			"networkPolicy.egress.redis.ports[0].port=6379"}, 2, []string{"26379", "6379"}},
		{"ports added", []string{"config.redis_url=redis://r:6380/0", "networkPolicy.egress.redis.ports[0].port=16380"}, 2, []string{"6380", "16380"}},
		{"existing accounts with ports", []string{"existingAccountsSecret=accs", "networkPolicy.egress.api.ports[0].port=443"}, 3, []string{"443"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := renderSet(t, chartDir, append(tt.set, "networkPolicy.enabled=true")...)
			rule := m.NetworkPolicies[0].Spec.Egress[tt.rule]
			var got []string
			for _, p := range rule.Ports {
				got = append(got, p.Port.String())
				if *p.Protocol != corev1.ProtocolTCP {
					t.Errorf("port %s/%s, want TCP", p.Port.String(), *p.Protocol)
				}
			}
			slices.Sort(got)
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("egress rule %d ports %v, want %v", tt.rule, got, tt.want)
			}
		})
	}
}

// Bumping only the chart's version leaves the pod template as it was (no rollout,
// no leader moved); a changed setting or secret changes it (the pods roll).
func TestChartVersionDoesNotRoll(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	chartYAML := filepath.Join(dir, "Chart.yaml")
	data, err := os.ReadFile(chartYAML)
	if err != nil {
		t.Fatal(err)
	}
	bumped := regexp.MustCompile(`(?m)^version: .*$`).ReplaceAll(data, []byte("version: 9.9.9"))
	if err := os.WriteFile(chartYAML, bumped, 0o644); err != nil {
		t.Fatal(err)
	}
	set := []string{"secret.api_key=k", "config.account=acme"}
	before := renderSet(t, chartDir, set...)
	after := renderSet(t, dir, set...)
	if before.ConfigMaps[0].Labels["helm.sh/chart"] == after.ConfigMaps[0].Labels["helm.sh/chart"] {
		t.Fatal("the version bump did not reach the objects' labels: the test proves nothing")
	}
	if !reflect.DeepEqual(before.Deployments[0].Spec.Template, after.Deployments[0].Spec.Template) {
		t.Errorf("a chart version bump changed the pod template:\n%+v\n%+v",
			before.Deployments[0].Spec.Template.ObjectMeta, after.Deployments[0].Spec.Template.ObjectMeta)
	}
	for _, change := range []struct{ set, annotation string }{
		{"config.account=globex", "checksum/config"},
		{"secret.api_key=rotated", "checksum/secret"},
	} {
		changed := renderSet(t, chartDir, append(set, change.set)...)
		a := before.Deployments[0].Spec.Template.Annotations[change.annotation]
		if a == "" || a == changed.Deployments[0].Spec.Template.Annotations[change.annotation] {
			t.Errorf("%s left %s at %q: the pods would keep the old value", change.set, change.annotation, a)
		}
	}
	// Accounts are re-read by the running fleet: adding one must not roll the pods.
	one := renderSet(t, chartDir, "accounts.a.api_domain=a", "accountKeysSecret=keys")
	two := renderSet(t, chartDir, "accounts.a.api_domain=a", "accounts.b.api_domain=b", "accountKeysSecret=keys")
	if !reflect.DeepEqual(one.Deployments[0].Spec.Template, two.Deployments[0].Spec.Template) {
		t.Error("adding an account changed the pod template: the fleet would restart instead of picking it up")
	}
}

// Values of a fleet the chart must refuse, naming the problem.
func TestRenderRefusesFleet(t *testing.T) {
	tests := []refusal{
		{"both budgets", []string{"podDisruptionBudget.minAvailable=1", "podDisruptionBudget.maxUnavailable=1"}, "podDisruptionBudget"},
		{"account name not a token", []string{"accounts.acme\\.eu.api_domain=a"}, "acme.eu"},
		{"unknown account setting", []string{"accounts.acme.api_domian=a"}, "api_domian"},
		{"account without a key", []string{"accounts.acme.api_domain=a"}, "accounts.acme has no API key"},
		{"account key twice", []string{"accounts.acme.api_key=k", "accountKeysSecret=keys"}, "accounts.acme.api_key and accountKeysSecret"},
		{"accounts twice", []string{"accounts.acme.api_key=k", "existingAccountsSecret=accs"}, "existingAccountsSecret and accounts"},
		{"keys without accounts", []string{"accountKeysSecret=keys"}, "accounts is empty"},
		{"process API key in a fleet", []string{"existingAccountsSecret=accs", "secret.api_key=k"}, "secret.api_key"},
		{"existingSecret's API key in a fleet", []string{"existingAccountsSecret=accs", "existingSecret.name=creds"}, "existingSecret.keys.api_key"},
		{"nats creds twice", []string{"nats.credsSecret.name=n", "config.nats_creds=/x"}, "config.nats_creds"},
		{"redis port not a number", []string{"networkPolicy.enabled=true", "config.redis_url=redis://r:63x9/0"}, "redis_url"},
		{"api port out of range", []string{"networkPolicy.enabled=true", "config.api_url=https://a:70000"}, "70000"},
		{"sentinels without the primary's port", []string{"networkPolicy.enabled=true", "config.redis_sentinel_addrs=s0:26379",
			"config.redis_sentinel_master=m"}, "networkPolicy.egress.redis.ports"},
		{"cluster address without a port", []string{"networkPolicy.enabled=true", "config.redis_cluster_addrs=r0"}, "redis_cluster_addrs"},
		{"process setting in an account", []string{"accounts.acme.redis_url=redis://r:6379/0", "accounts.acme.api_key=k"}, "redis_url"},
		{"accounts_dir in config", []string{"config.accounts_dir=/x"}, "accounts_dir"},
		{"existing accounts without API ports", []string{"networkPolicy.enabled=true", "existingAccountsSecret=accs"}, "networkPolicy.egress.api.ports"},
		{"memory limit with an exponent", []string{"resources.limits.memory=5e8"}, "resources.limits.memory"},
	}
	refuses(t, tests)
}

// renderNotes renders NOTES.txt with --set values (helm template leaves it out): a
// copy of the chart holds it as a file and a ConfigMap that renders it with tpl.
func renderNotes(t *testing.T, set ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(chartDir, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), notes, 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ tpl (.Files.Get \"notes.txt\") . | quote }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "notes.yaml"), []byte(wrapper), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"template", release, dir, "--namespace", namespace, "--kube-version", kubeVersion, "--show-only", "templates/notes.yaml"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	m, err := decode(helm(t, args...))
	if err != nil || len(m.ConfigMaps) != 1 {
		t.Fatalf("notes: %v", err)
	}
	return m.ConfigMaps[0].Data["notes"]
}

// NOTES' commands work as pasted: port-forward blocks until killed, so curl must
// not wait behind it with &&; a fleet's notes name its accounts and do not ask
// for the single account's settings.
func TestNotes(t *testing.T) {
	single := renderNotes(t)
	fleet := renderNotes(t, "accounts.acme.api_domain=acme", "accounts.globex.api_domain=globex", "accountKeysSecret=keys",
		"config.nats_url=nats://n:4222", "config.redis_url=redis://r:6379/0")
	for name, notes := range map[string]string{"single": single, "fleet": fleet} {
		for line := range strings.Lines(notes) {
			if strings.Contains(line, "kubectl") && strings.Contains(line, "port-forward") && (strings.Contains(line, "&&") || !strings.HasSuffix(strings.TrimSpace(line), "&")) {
				t.Errorf("%s: %q: port-forward blocks, so what follows it never runs", name, line)
			}
		}
		if !strings.Contains(notes, "/readyz") || !strings.Contains(notes, "helm test "+release) {
			t.Errorf("%s notes do not say how to check /readyz:\n%s", name, notes)
		}
	}
	if !strings.Contains(single, "config.account") {
		t.Errorf("single-account notes do not warn of the missing account:\n%s", single)
	}
	if !strings.Contains(fleet, "2 account(s) (acme, globex)") || strings.Contains(fleet, "WARNING") {
		t.Errorf("fleet notes:\n%s", fleet)
	}
}

// The chart offers under `accounts` only settings an account file accepts: for each
// one, a file setting it draws no "setting of the process" refusal from the service's
// own reader (config.ReadAccountFile), which does refuse redis_url there.
func TestAccountSettingsAccepted(t *testing.T) {
	data, err := HelmValuesSchema()
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Properties struct {
			Accounts struct {
				AdditionalProperties struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"additionalProperties"`
			} `json:"accounts"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	offered := slices.Sorted(maps.Keys(root.Properties.Accounts.AdditionalProperties.Properties))
	if len(offered) < 5 {
		t.Fatalf("accounts offer %v", offered)
	}
	refused := func(key string) bool {
		dir := t.TempDir()
		file, _ := json.Marshal(map[string]any{key: "x", "api_key_file": "acme.key"})
		if err := os.WriteFile(filepath.Join(dir, "acme.json"), file, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "acme.key"), []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := config.ReadAccountFile(dir, "acme.json", nil)
		var fe *config.AccountFileError
		if !errors.As(err, &fe) {
			return false
		}
		return slices.ContainsFunc(fe.Problems, func(p iparams.Problem) bool {
			return p.Key == key && strings.Contains(p.Message, "of the process")
		})
	}
	if !refused("redis_url") {
		t.Fatal("an account file setting redis_url is not refused as a process setting: this test proves nothing")
	}
	for _, key := range offered {
		if key != "api_key" && refused(key) {
			t.Errorf("accounts offer %s, which an account file refuses", key)
		}
	}
}

// The account files the chart writes are valid for the service: each <account>.json
// of ci/fleet.yaml's accounts Secret, with its key file, read by
// config.ReadAccountFile over the process's settings from the ConfigMap.
func TestAccountFilesValid(t *testing.T) {
	file := filepath.Join(chartDir, "ci", "fleet.yaml")
	m, err := decode(render(t, file))
	if err != nil {
		t.Fatal(err)
	}
	v := readValues(t, file)
	dir := t.TempDir()
	var names []string
	for _, s := range m.Secrets {
		if s.Name != release+"-callbus-accounts" {
			continue
		}
		for name, data := range s.Data {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
			if account, ok := strings.CutSuffix(name, ".json"); ok {
				names = append(names, account)
				// ci/fleet.yaml takes the keys from accountKeysSecret: stand in for it.
				if err := os.WriteFile(filepath.Join(dir, account+".key"), []byte("key-of-"+account+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if len(names) != len(v.Accounts) {
		t.Fatalf("accounts Secret holds %v, values %d accounts", names, len(v.Accounts))
	}
	for _, name := range names {
		a, err := config.ReadAccountFile(dir, name+".json", v.Config)
		if err != nil {
			t.Errorf("%s.json refused: %v", name, err)
			continue
		}
		if a.Name != name || a.Settings.APIKey.Reveal() != "key-of-"+name {
			t.Errorf("%s.json read as account %q with another key", name, a.Name)
		}
	}
}
