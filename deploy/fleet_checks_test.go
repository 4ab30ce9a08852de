package deploy

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/callbus/callbus/config"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// More promises of the chart, checked on every rendering (TestRender): the fleet's
// accounts directory, the derived egress ports, labels, GOMEMLIMIT and `helm test`.

const accountsDir = "/var/run/callbus/accounts"

// budget: the values' minAvailable or maxUnavailable (neither: maxUnavailable 1), over the pods,
// and not-ready pods always evictable so that a drain never waits on them.
func (c *check) budget(pdb policyv1.PodDisruptionBudget, labels map[string]string) {
	want := c.v.PodDisruptionBudget
	got := pdb.Spec
	if want.MinAvailable == nil && want.MaxUnavailable == nil {
		want.MaxUnavailable = float64(1) // the chart's default budget
	}
	switch {
	case want.MaxUnavailable != nil:
		if got.MinAvailable != nil || got.MaxUnavailable == nil || got.MaxUnavailable.String() != fmt.Sprint(want.MaxUnavailable) {
			c.Errorf("PodDisruptionBudget %+v, want maxUnavailable %v only", got, want.MaxUnavailable)
		}
	case got.MaxUnavailable != nil || got.MinAvailable == nil || got.MinAvailable.String() != fmt.Sprint(want.MinAvailable):
		c.Errorf("PodDisruptionBudget %+v, want minAvailable %v only", got, want.MinAvailable)
	}
	if got.UnhealthyPodEvictionPolicy == nil || *got.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
		c.Errorf("unhealthyPodEvictionPolicy %v, want AlwaysAllow", got.UnhealthyPodEvictionPolicy)
	}
	if got.Selector == nil || !subset(got.Selector.MatchLabels, labels) {
		c.Errorf("PodDisruptionBudget selector %+v does not select the pods", got.Selector)
	}
}

// labels: the pods carry every app.kubernetes.io/* label but not helm.sh/chart
// (a chart version alone must not change the pod template); the other objects
// carry helm.sh/chart too.
func (c *check) labels() {
	pod := c.deployment().Spec.Template.Labels
	for _, k := range []string{"name", "instance", "version", "component", "part-of", "managed-by"} {
		if pod["app.kubernetes.io/"+k] == "" {
			c.Errorf("pod labels %v lack app.kubernetes.io/%s", pod, k)
		}
	}
	if _, ok := pod["helm.sh/chart"]; ok {
		c.Errorf("pod labels %v hold helm.sh/chart: a chart version bump would roll the pods", pod)
	}
	if sel := c.deployment().Spec.Selector.MatchLabels; len(sel) != 3 || sel["app.kubernetes.io/version"] != "" {
		c.Errorf("selector %v: want name, instance and component only (a selector cannot change)", sel)
	}
	for _, l := range []map[string]string{c.deployment().Labels, c.m.ConfigMaps[0].Labels, c.m.Services[0].Labels} {
		if l["helm.sh/chart"] == "" || l["app.kubernetes.io/part-of"] != "callbus" {
			c.Errorf("object labels %v lack helm.sh/chart or part-of", l)
		}
	}
}

// memoryLimit: GOMEMLIMIT is 90% of the memory limit, in bytes, as Kubernetes
// reads the quantity.
func (c *check) memoryLimit() {
	e := env(c.container(), "GOMEMLIMIT")
	limit, ok := c.v.Resources.Limits["memory"]
	if !ok || limit == nil {
		if e != nil {
			c.Errorf("GOMEMLIMIT %+v without a memory limit", e)
		}
		return
	}
	q := resource.MustParse(fmt.Sprint(limit))
	if e == nil || e.Value != strconv.FormatInt(q.Value()*9/10, 10) {
		c.Errorf("GOMEMLIMIT %+v, want 90%% of %s: %d", e, q.String(), q.Value()*9/10)
	}
}

// fleet: with accounts, the chart's Secret holds <account>.json (the entry less
// api_key, plus api_key_file) and the keys given, and the pod mounts it (with
// accountKeysSecret) as CALLBUS_ACCOUNTS_DIR; with existingAccountsSecret, that
// Secret; neither: no accounts directory.
func (c *check) fleet() {
	ctr, pod := c.container(), c.pod()
	fleet := len(c.v.Accounts) > 0 || c.v.ExistingAccountsSecret != ""
	dirEnv := env(ctr, "CALLBUS_ACCOUNTS_DIR")
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "accounts" {
			vol = &pod.Volumes[i]
		}
	}
	if !fleet {
		if dirEnv != nil || vol != nil {
			c.Errorf("CALLBUS_ACCOUNTS_DIR %+v and accounts volume %+v without accounts", dirEnv, vol)
		}
		return
	}
	if dirEnv == nil || dirEnv.Value != accountsDir {
		c.Errorf("CALLBUS_ACCOUNTS_DIR %+v, want %s", dirEnv, accountsDir)
	}
	mounted := slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "accounts" && m.MountPath == accountsDir && m.ReadOnly
	})
	if vol == nil || !mounted {
		c.Fatalf("accounts volume %+v mounted read-only at %s: %v", vol, accountsDir, mounted)
	}
	if c.v.ExistingAccountsSecret != "" {
		if vol.Secret == nil || vol.Secret.SecretName != c.v.ExistingAccountsSecret || len(vol.Secret.Items) != 0 {
			c.Errorf("accounts volume %+v, want the whole Secret %s", vol, c.v.ExistingAccountsSecret)
		}
		return
	}
	c.accountsVolume(vol)
	c.accountsSecret()
}

// accountsVolume: the chart's Secret, and accountKeysSecret optional (a missing key
// refuses one account, it does not keep the pod from starting), both whole so that
// adding an account does not change the pod template.
func (c *check) accountsVolume(vol *corev1.Volume) {
	want := []string{release + "-callbus-accounts"}
	if c.v.AccountKeysSecret != "" {
		want = append(want, c.v.AccountKeysSecret)
	}
	var got []string
	if vol.Projected != nil {
		for i, src := range vol.Projected.Sources {
			if src.Secret == nil || len(src.Secret.Items) != 0 || (i > 0) != isTrue(src.Secret.Optional) {
				c.Errorf("accounts source %+v: want a whole Secret, optional for the keys", src)
				continue
			}
			got = append(got, src.Secret.Name)
		}
	}
	if !slices.Equal(got, want) {
		c.Errorf("accounts volume from %v, want %v", got, want)
	}
}

func (c *check) accountsSecret() {
	var data map[string][]byte
	for _, s := range c.m.Secrets {
		if s.Name == release+"-callbus-accounts" {
			data = s.Data
		}
	}
	files := 0
	for name, entry := range c.v.Accounts {
		var got map[string]any
		if err := json.Unmarshal(data[name+".json"], &got); err != nil {
			c.Errorf("accounts Secret's %s.json: %v", name, err)
			continue
		}
		want := map[string]any{"api_key_file": name + ".key"}
		for k, v := range entry {
			if k != "api_key" {
				want[k] = v
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			c.Errorf("%s.json holds %v, want %v", name, got, want)
		}
		files++
		if key, _ := entry["api_key"].(string); key != "" {
			if string(data[name+".key"]) != key {
				c.Errorf("accounts Secret's %s.key is not the values' api_key", name)
			}
			files++
		}
	}
	if len(data) != files {
		c.Errorf("accounts Secret holds %d files, want %d", len(data), files)
	}
}

// natsFiles: nats.credsSecret / tlsCASecret are mounted and named by
// CALLBUS_NATS_CREDS / CALLBUS_NATS_TLS_CA.
func (c *check) natsFiles() {
	for _, f := range []struct {
		envName, file, secret, key string
	}{
		{"CALLBUS_NATS_CREDS", "nats.creds", c.v.Nats.CredsSecret.Name, c.v.Nats.CredsSecret.Key},
		{"CALLBUS_NATS_TLS_CA", "ca.crt", c.v.Nats.TLSCASecret.Name, c.v.Nats.TLSCASecret.Key},
	} {
		e := env(c.container(), f.envName)
		if f.secret == "" {
			if e != nil {
				c.Errorf("%s set without its Secret", f.envName)
			}
			continue
		}
		if e == nil {
			c.Errorf("%s not set", f.envName)
			continue
		}
		if secret, key := c.projectedFile(e.Value); secret != f.secret || key != f.key {
			c.Errorf("%s=%s is key %q of %q, want %q of %q", f.envName, e.Value, key, secret, f.key, f.secret)
		}
	}
}

// projectedFile is the Secret and key projected to file by a mounted projected volume.
func (c *check) projectedFile(file string) (secret, key string) {
	for _, m := range c.container().VolumeMounts {
		rel, ok := strings.CutPrefix(file, m.MountPath+"/")
		if !ok {
			continue
		}
		for _, v := range c.pod().Volumes {
			if v.Name != m.Name || v.Projected == nil {
				continue
			}
			for _, src := range v.Projected.Sources {
				for _, item := range src.Secret.Items {
					if item.Path == rel {
						return src.Secret.Name, item.Key
					}
				}
			}
		}
	}
	return "", ""
}

// egress: the NetworkPolicy lets out every port of every configured URL, derived
// here on its own (net/url) from the values and the declared defaults.
func (c *check) egress() {
	if !c.v.NetworkPolicy.Enabled {
		return
	}
	allowed := map[string]bool{}
	for _, rule := range c.m.NetworkPolicies[0].Spec.Egress {
		for _, p := range rule.Ports {
			allowed[p.Port.String()+"/"+string(*p.Protocol)] = true
		}
	}
	for _, port := range c.wantEgress() {
		if !allowed[port+"/TCP"] {
			c.Errorf("egress allows %v, not %s/TCP", allowed, port)
		}
	}
	if from := c.v.NetworkPolicy.Ingress.From; len(from) > 0 && c.v.Tests.Enabled {
		if peers := c.m.NetworkPolicies[0].Spec.Ingress[0].From; len(peers) != len(from)+1 ||
			peers[len(from)].PodSelector == nil || peers[len(from)].PodSelector.MatchLabels["app.kubernetes.io/component"] != "test" {
			c.Errorf("ingress peers %+v: want the values' and the helm test pod", peers)
		}
	}
}

func (c *check) wantEgress() []string {
	d, err := config.Declarations()
	if err != nil {
		c.Fatal(err)
	}
	setting := func(key string) string {
		if v, ok := c.v.Config[key]; ok {
			return fmt.Sprint(v)
		}
		p, _ := d.Param(key)
		return fmt.Sprint(p.Default)
	}
	want := urlPorts(c, setting("nats_url"), map[string]string{"nats": "4222", "tls": "4222", "ws": "80", "wss": "443"})
	cluster, _ := c.v.Config["redis_cluster_addrs"].(string)
	sentinels, _ := c.v.Config["redis_sentinel_addrs"].(string)
	for _, addr := range strings.Split(cluster+","+sentinels, ",") {
		if addr = strings.TrimSpace(addr); addr != "" {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				c.Errorf("redis address %q: %v", addr, err)
			}
			want = append(want, port)
		}
	}
	if cluster == "" && sentinels == "" {
		want = append(want, urlPorts(c, setting("redis_url"), map[string]string{"redis": "6379", "rediss": "6379"})...)
	}
	api := map[string]string{"http": "80", "https": "443"}
	for _, values := range append([]map[string]any{c.v.Config}, mapsOf(c.v.Accounts)...) {
		switch {
		case values["api_url"] != nil:
			want = append(want, urlPorts(c, fmt.Sprint(values["api_url"]), api)...)
		case values["api_domain"] != nil:
			want = append(want, "443")
		}
	}
	return want
}

// urlPorts is the port of each comma-separated URL, or its scheme's default.
func urlPorts(c *check, urls string, defaults map[string]string) []string {
	var ports []string
	for _, raw := range strings.Split(urls, ",") {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			c.Errorf("URL %q: %v", raw, err)
			continue
		}
		port := u.Port()
		if port == "" {
			port = defaults[u.Scheme]
		}
		ports = append(ports, port)
	}
	return ports
}

func mapsOf(accounts map[string]map[string]any) []map[string]any {
	var out []map[string]any
	for _, a := range accounts {
		out = append(out, a)
	}
	return out
}

// spread: every topology spread constraint selects the pods (given or filled in) and
// counts the new ReplicaSet's pods apart (matchLabelKeys pod-template-hash).
func (c *check) spread() {
	got := c.pod().TopologySpreadConstraints
	if len(got) != len(c.v.TopologySpreadConstraints) {
		c.Fatalf("%d topology spread constraints, want %d", len(got), len(c.v.TopologySpreadConstraints))
	}
	labels := c.deployment().Spec.Template.Labels
	for _, tsc := range got {
		if tsc.LabelSelector == nil || !subset(tsc.LabelSelector.MatchLabels, labels) ||
			!slices.Contains(tsc.MatchLabelKeys, "pod-template-hash") {
			c.Errorf("topology spread %+v: want the pods' selector and matchLabelKeys pod-template-hash", tsc)
		}
	}
}

// helmTest: the test hook pod GETs /readyz of the Service on its port, hardened as
// the poller's.
func (c *check) helmTest() {
	if !c.v.Tests.Enabled {
		if len(c.m.Pods) != 0 {
			c.Errorf("%d test pods, tests disabled", len(c.m.Pods))
		}
		return
	}
	if len(c.m.Pods) != 1 {
		c.Fatalf("%d test pods, want 1", len(c.m.Pods))
	}
	p := c.m.Pods[0]
	svc := c.m.Services[0]
	wantURL := fmt.Sprintf("http://%s:%d/readyz", svc.Name, svc.Spec.Ports[0].Port)
	if p.Annotations["helm.sh/hook"] != "test" || p.Spec.RestartPolicy != corev1.RestartPolicyNever {
		c.Errorf("test pod annotations %v, restart %s: want a helm test hook run once", p.Annotations, p.Spec.RestartPolicy)
	}
	script := strings.Join(p.Spec.Containers[0].Command, " ")
	if !strings.Contains(script, "wget") || !strings.Contains(script, wantURL) {
		c.Errorf("test pod runs %q, want a GET of %s", script, wantURL)
	}
	sc := p.Spec.Containers[0].SecurityContext
	if sc == nil || !isTrue(sc.ReadOnlyRootFilesystem) || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
		c.Errorf("test pod not hardened: %+v", p.Spec)
	}
}
