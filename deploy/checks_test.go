package deploy

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	httpPort       = 8081
	nonRootUser    = 65532
	defaultTimeout = 20 // shutdown_timeout_seconds' declared default
)

// check holds one rendering and the values it came from; each method checks one
// promise of the chart.
type check struct {
	*testing.T
	v   chartValues
	m   manifests
	out []byte
}

func (c *check) deployment() appsv1.Deployment { return c.m.Deployments[0] }

func (c *check) pod() corev1.PodSpec { return c.m.Deployments[0].Spec.Template.Spec }

func (c *check) container() corev1.Container {
	return c.m.Deployments[0].Spec.Template.Spec.Containers[0]
}

// objects: one of each of the chart's own objects, replicas as asked, a rolling
// update that never goes below the replica count.
func (c *check) objects() {
	if len(c.m.Deployments) != 1 || len(c.m.ConfigMaps) != 1 || len(c.m.Services) != 1 || len(c.m.ServiceAccounts) != 1 {
		c.Fatalf("got %d Deployments, %d ConfigMaps, %d Services, %d ServiceAccounts; want one each",
			len(c.m.Deployments), len(c.m.ConfigMaps), len(c.m.Services), len(c.m.ServiceAccounts))
	}
	d := c.deployment()
	if d.Namespace != namespace {
		c.Errorf("Deployment in namespace %q, want %q", d.Namespace, namespace)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != c.v.ReplicaCount {
		c.Errorf("replicas %v, want %d", d.Spec.Replicas, c.v.ReplicaCount)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil ||
		ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 || ru.MaxSurge == nil || ru.MaxSurge.IntValue() < 1 {
		c.Errorf("strategy %+v, want a rolling update with maxUnavailable 0 and a surge", d.Spec.Strategy)
	}
	if got := len(c.pod().Containers); got != 1 {
		c.Fatalf("%d containers, want 1", got)
	}
	if !subset(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		c.Errorf("selector %v does not select the pod's labels %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
}

// hardened: non-root, read-only root filesystem, no capabilities, no privilege
// escalation, RuntimeDefault seccomp, no API token.
func (c *check) hardened() {
	pod, ctr := c.pod(), c.container()
	psc, sc := pod.SecurityContext, ctr.SecurityContext
	if psc == nil || sc == nil {
		c.Fatalf("pod securityContext %v, container securityContext %v: want both", psc, sc)
	}
	if !isTrue(sc.RunAsNonRoot) && !isTrue(psc.RunAsNonRoot) {
		c.Error("runAsNonRoot not set")
	}
	if uid := firstInt(sc.RunAsUser, psc.RunAsUser); uid != nonRootUser {
		c.Errorf("runAsUser %d, want %d", uid, nonRootUser)
	}
	if psc.FSGroup == nil {
		c.Error("pod securityContext without fsGroup: the secret files would not be readable")
	}
	if !isTrue(sc.ReadOnlyRootFilesystem) {
		c.Error("readOnlyRootFilesystem not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		c.Error("allowPrivilegeEscalation not false")
	}
	if isTrue(sc.Privileged) {
		c.Error("privileged")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		c.Errorf("capabilities %+v, want drop ALL and add none", sc.Capabilities)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		c.Errorf("seccompProfile %+v, want RuntimeDefault", seccomp)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		c.Error("automountServiceAccountToken not false on the pod")
	}
	if sa := c.m.ServiceAccounts[0]; sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		c.Error("automountServiceAccountToken not false on the ServiceAccount")
	}
	if pod.ServiceAccountName != c.m.ServiceAccounts[0].Name {
		c.Errorf("pod runs as %q, want the chart's ServiceAccount %q", pod.ServiceAccountName, c.m.ServiceAccounts[0].Name)
	}
	if ctr.Resources.Requests.Memory().IsZero() || ctr.Resources.Limits.Memory().IsZero() {
		c.Errorf("resources %+v: want memory requests and limits", ctr.Resources)
	}
}

// probes: /healthz for startup and liveness, /readyz for readiness, all on the
// port named http that CALLBUS_HTTP_ADDR listens on; the instance id is the pod's name.
func (c *check) probes() {
	ctr := c.container()
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"startup", ctr.StartupProbe, "/healthz"}, {"liveness", ctr.LivenessProbe, "/healthz"}, {"readiness", ctr.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			c.Errorf("%s probe %+v, want an HTTP GET", p.name, p.probe)
			continue
		}
		if g := p.probe.HTTPGet; g.Path != p.path || g.Port != intstr.FromString("http") {
			c.Errorf("%s probe GET %s on port %s, want %s on http", p.name, g.Path, g.Port.String(), p.path)
		}
	}
	var named bool
	for _, p := range ctr.Ports {
		named = named || (p.Name == "http" && p.ContainerPort == httpPort)
	}
	if !named {
		c.Errorf("ports %+v, want http on %d", ctr.Ports, httpPort)
	}
	if e := env(ctr, "CALLBUS_HTTP_ADDR"); e == nil || e.Value != fmt.Sprintf(":%d", httpPort) {
		c.Errorf("CALLBUS_HTTP_ADDR %+v, want :%d", e, httpPort)
	}
	if e := env(ctr, "CALLBUS_INSTANCE_ID"); e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		c.Errorf("CALLBUS_INSTANCE_ID %+v, want the pod's name from the downward API", e)
	}
	shutdown := int64(defaultTimeout)
	if s, ok := c.v.Config["shutdown_timeout_seconds"].(float64); ok {
		shutdown = int64(s)
	}
	if g := c.pod().TerminationGracePeriodSeconds; g == nil || *g <= shutdown {
		c.Errorf("terminationGracePeriodSeconds %v, want more than the shutdown timeout %d", g, shutdown)
	}
}

// config: each setting of `config` is in the ConfigMap as CALLBUS_<KEY>, in the
// environment's syntax, and the container reads that ConfigMap.
func (c *check) config() {
	cm := c.m.ConfigMaps[0]
	for key, val := range c.v.Config {
		name := "CALLBUS_" + strings.ToUpper(key)
		if got, want := cm.Data[name], envString(val); got != want {
			c.Errorf("ConfigMap %s=%q, want %q", name, got, want)
		}
	}
	if len(cm.Data) != len(c.v.Config) {
		c.Errorf("ConfigMap holds %d keys, values' config %d", len(cm.Data), len(c.v.Config))
	}
	ctr := c.container()
	if len(ctr.EnvFrom) != 1 || ctr.EnvFrom[0].ConfigMapRef == nil || ctr.EnvFrom[0].ConfigMapRef.Name != cm.Name {
		c.Errorf("envFrom %+v, want the ConfigMap %s", ctr.EnvFrom, cm.Name)
	}
}

// envString is a config value as the chart writes it to the environment.
func envString(v any) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, p := range v {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ",")
	case float64:
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprint(v)
}

// secrets: each secure setting given reaches the pod as a file of a Secret volume
// named by CALLBUS_<KEY>_FILE, from the chart's Secret or existingSecret with its
// key mapping; none is in a ConfigMap, in literal env, or anywhere in the output
// in clear.
func (c *check) secrets() {
	ctr, pod := c.container(), c.pod()
	for key, value := range c.v.Secret {
		if value != "" && bytes.Contains(c.out, []byte(value)) {
			c.Errorf("the value of secret.%s appears in clear in the rendered manifests", key)
		}
	}
	wantSecret, wantKeys := release+"-callbus", map[string]string{}
	if c.v.ExistingSecret.Name != "" {
		wantSecret = c.v.ExistingSecret.Name
		for key, secretKey := range c.v.ExistingSecret.Keys {
			if secretKey != "" {
				wantKeys[key] = secretKey
			}
		}
		if slices.ContainsFunc(c.m.Secrets, func(s corev1.Secret) bool { return s.Name == release+"-callbus" }) {
			c.Errorf("the chart's Secret rendered with existingSecret")
		}
	} else {
		for key, value := range c.v.Secret {
			if value != "" {
				wantKeys[key] = key
			}
		}
	}
	for key := range c.v.Secret { // every secure key, given or not
		name := "CALLBUS_" + strings.ToUpper(key)
		for cmKey := range c.m.ConfigMaps[0].Data {
			if strings.HasPrefix(cmKey, name) {
				c.Errorf("ConfigMap holds %s", cmKey)
			}
		}
		if e := env(ctr, name); e != nil && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			c.Errorf("%s set in the environment other than from a Secret: %+v", name, e)
		}
		file := env(ctr, name+"_FILE")
		secretKey, given := wantKeys[key]
		switch {
		case !given && file != nil:
			c.Errorf("%s_FILE set but %s is not given", name, key)
		case given && file == nil:
			c.Errorf("%s given but %s_FILE not set", key, name)
		case given:
			secretName, item := c.secretFile(pod, ctr, file.Value)
			if secretName != wantSecret || item != secretKey {
				c.Errorf("%s_FILE=%s is key %q of Secret %q, want key %q of Secret %q", name, file.Value, item, secretName, secretKey, wantSecret)
			}
			if c.v.ExistingSecret.Name == "" && !c.chartSecretHolds(wantSecret, key, c.v.Secret[key]) {
				c.Errorf("Secret %s does not hold %s", wantSecret, key)
			}
		}
	}
}

// secretFile finds the Secret volume mounted over file's directory and the key of
// that Secret projected to file ("" when there is none).
func (c *check) secretFile(pod corev1.PodSpec, ctr corev1.Container, file string) (secretName, key string) {
	dir, base := path.Split(file)
	for _, mount := range ctr.VolumeMounts {
		if path.Clean(mount.MountPath) != path.Clean(dir) {
			continue
		}
		if !mount.ReadOnly {
			c.Errorf("secret volume %s mounted read-write", mount.Name)
		}
		for i := range pod.Volumes {
			vol := &pod.Volumes[i]
			if vol.Name != mount.Name || vol.Secret == nil {
				continue
			}
			for _, item := range vol.Secret.Items {
				if item.Path == base {
					return vol.Secret.SecretName, item.Key
				}
			}
			return vol.Secret.SecretName, ""
		}
	}
	return "", ""
}

func (c *check) chartSecretHolds(name, key, value string) bool {
	for _, s := range c.m.Secrets {
		if s.Name == name {
			return string(s.Data[key]) == value
		}
	}
	return false
}

// availability: a PodDisruptionBudget over the pods when there are several, with the
// budget of the values and unhealthy pods always evictable, and replicas spread over
// nodes.
func (c *check) availability() {
	labels := c.deployment().Spec.Template.Labels
	wantPDB := c.v.PodDisruptionBudget.Enabled && c.v.ReplicaCount > 1
	if n := len(c.m.PodDisruptionBudget); n > 1 || (n == 1) != wantPDB {
		c.Fatalf("%d PodDisruptionBudgets; want one: %v", n, wantPDB)
	}
	if wantPDB {
		c.budget(c.m.PodDisruptionBudget[0], labels)
	}
	aff := c.pod().Affinity
	if c.v.PodAntiAffinity == "none" {
		return
	}
	if aff == nil || aff.PodAntiAffinity == nil {
		c.Fatalf("affinity %+v, want pod anti-affinity", aff)
	}
	var terms []corev1.PodAffinityTerm
	for _, w := range aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		terms = append(terms, w.PodAffinityTerm)
	}
	terms = append(terms, aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
	var spread bool
	for _, term := range terms {
		spread = spread || (term.TopologyKey == "kubernetes.io/hostname" && term.LabelSelector != nil &&
			subset(term.LabelSelector.MatchLabels, labels))
	}
	if !spread {
		c.Errorf("anti-affinity %+v does not keep the replicas on different nodes", aff.PodAntiAffinity)
	}
	if c.v.PodAntiAffinity == "soft" && len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		c.Error("soft anti-affinity is required")
	}
}

// monitoring: the Service selects the pods on http; the ServiceMonitor scrapes its
// /metrics; the NetworkPolicy lets in the http port and out DNS, NATS, Redis and
// the API. The last two only when enabled.
func (c *check) monitoring() {
	labels := c.deployment().Spec.Template.Labels
	svc := c.m.Services[0]
	if !subset(svc.Spec.Selector, labels) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != intstr.FromString("http") ||
		svc.Spec.Ports[0].Name != "http" {
		c.Errorf("Service %+v, want port http over the pods", svc.Spec)
	}
	if got := len(c.m.ServiceMonitors) == 1; got != c.v.ServiceMonitor.Enabled {
		c.Errorf("ServiceMonitor rendered %v, want %v", got, c.v.ServiceMonitor.Enabled)
	} else if got {
		sm := c.m.ServiceMonitors[0]
		ok := len(sm.Spec.Endpoints) == 1 && sm.Spec.Endpoints[0].Port == "http" && sm.Spec.Endpoints[0].Path == "/metrics" &&
			subset(sm.Spec.Selector.MatchLabels, svc.Labels) && len(sm.Spec.NamespaceSelector.MatchNames) == 1 &&
			sm.Spec.NamespaceSelector.MatchNames[0] == namespace
		if !ok {
			c.Errorf("ServiceMonitor %+v, want /metrics of the Service's http port", sm.Spec)
		}
	}
	if got := len(c.m.NetworkPolicies) == 1; got != c.v.NetworkPolicy.Enabled {
		c.Errorf("NetworkPolicy rendered %v, want %v", got, c.v.NetworkPolicy.Enabled)
	} else if got {
		np := c.m.NetworkPolicies[0]
		if !subset(np.Spec.PodSelector.MatchLabels, labels) || len(np.Spec.PolicyTypes) != 2 {
			c.Errorf("NetworkPolicy %+v, want Ingress and Egress over the pods", np.Spec)
		}
		if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].Ports) != 1 || *np.Spec.Ingress[0].Ports[0].Port != intstr.FromString("http") {
			c.Errorf("ingress %+v, want the http port only", np.Spec.Ingress)
		}
		out := map[string]bool{}
		for _, rule := range np.Spec.Egress {
			for _, p := range rule.Ports {
				out[fmt.Sprintf("%s/%s", p.Port.String(), *p.Protocol)] = true
			}
		}
		// DNS; the ports of NATS, Redis and the API are egress()'s.
		for _, want := range []string{"53/UDP", "53/TCP"} {
			if !out[want] {
				c.Errorf("egress allows %v, not %s", out, want)
			}
		}
	}
}

func env(ctr corev1.Container, name string) *corev1.EnvVar {
	for i := range ctr.Env {
		if ctr.Env[i].Name == name {
			return &ctr.Env[i]
		}
	}
	return nil
}

func subset(sub, of map[string]string) bool {
	if len(sub) == 0 {
		return false
	}
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return true
}

func isTrue(b *bool) bool { return b != nil && *b }

func firstInt(vs ...*int64) int64 {
	for _, v := range vs {
		if v != nil {
			return *v
		}
	}
	return -1
}
