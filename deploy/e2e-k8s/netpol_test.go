//go:build e2ek8s

package e2ek8s

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// probeImage is the test pod's busybox image (images.sh), which holds dial.
const probeImage = "busybox:1.37"

// networkPolicy checks the fleet's NetworkPolicy as the API server stored it
// (egress only to DNS, the three NATS ports, Redis's and the API's; every rule
// with ports), then, when run.sh started kube-router's network policy controller
// (CALLBUS_K8S_NETPOL=kube-router), as that controller enforces it: from
// a fleet pod (an ephemeral container shares the pod's network, so the policy
// applies to it) Redis, NATS and the API connect, and a port of the same node
// address that the policy does not declare is refused, while that port answers
// a pod the policy does not select.
func (s *suite) networkPolicy(t *testing.T) string {
	stored := s.storedPolicy(t)
	if !enforced() {
		return stored + "; not enforced: the bridge CNI enforces nothing (CALLBUS_K8S_NETPOL=kube-router runs kube-router's controller)"
	}
	l, err := net.Listen("tcp", nodeIP+":0")
	if err != nil {
		t.Fatalf("the undeclared destination: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	undeclared := l.Addr().String()
	nats, _ := url.Parse(strings.Split(s.b.nats.URLs(), ",")[0])
	redis, _ := url.Parse(s.b.redisURL())
	api, _ := url.Parse(s.b.simURL)
	declared := map[string]string{"Redis": redis.Host, "NATS": nats.Host, "the API": api.Host}
	names := slices.Sorted(func(yield func(string) bool) {
		for p := range s.b.pods(t, "fleet") {
			if !yield(p) {
				return
			}
		}
	})
	if len(names) == 0 {
		t.Fatal("no running fleet pod to probe from")
	}
	pod := names[0]
	// kube-router applies a policy at its next sync after the pods and the policy
	// appear: a few tries, each a new ephemeral container.
	var got map[string]string
	start := time.Now()
	for try := 1; ; try++ {
		got = s.probeFrom(t, pod, fmt.Sprintf("netprobe-%d", try), append(slices.Collect(mapValues(declared)), undeclared))
		if strings.HasPrefix(got[undeclared], "blocked") || try == 5 {
			break
		}
		time.Sleep(3 * time.Second) // kube-router's sync
	}
	for what, addr := range declared {
		if got[addr] != "connected" {
			t.Errorf("from %s, %s (%s) declared in the policy: %s", pod, what, addr, got[addr])
		}
	}
	if !strings.HasPrefix(got[undeclared], "blocked") {
		t.Fatalf("from %s, the undeclared %s: %q, want blocked by the policy", pod, undeclared, got[undeclared])
	}
	control := s.probeUnselected(t, undeclared)
	if control != "connected" {
		t.Fatalf("from a pod the policy does not select, %s: %q, want connected (else the block is not the policy's)", undeclared, control)
	}
	return fmt.Sprintf("%s; enforced (kube-router %s): from a fleet pod Redis, NATS and the API connect, an undeclared port of the node is %s (%.0fs after the install), reached from an unselected pod",
		stored, kubeRouterVersion(), strings.TrimSpace(strings.TrimPrefix(got[undeclared], "blocked:")), time.Since(start).Seconds())
}

// mapValues yields m's values.
func mapValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// enforced reports whether run.sh started a network policy controller
// (CALLBUS_K8S_NETPOL=kube-router).
func enforced() bool { return os.Getenv("E2E_NETPOL") == "kube-router" }

// kubeRouterVersion is the version run.sh built (KUBE_ROUTER_VERSION).
func kubeRouterVersion() string { return cmp.Or(os.Getenv("E2E_KUBE_ROUTER_VERSION"), "?") }

// storedPolicy checks the policy the API server stored and returns its egress
// ports.
func (s *suite) storedPolicy(t *testing.T) string {
	var np networkingv1.NetworkPolicy
	if err := json.Unmarshal([]byte(s.b.k(t, "get", "networkpolicy", "fleet-callbus", "-o", "json")), &np); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"53/UDP": true, "53/TCP": true}
	for _, u := range strings.Split(s.b.nats.URLs(), ",") {
		want[u[strings.LastIndex(u, ":")+1:]+"/TCP"] = true
	}
	want[s.b.redisURL()[strings.LastIndex(s.b.redisURL(), ":")+1:strings.LastIndex(s.b.redisURL(), "/")]+"/TCP"] = true
	want[s.b.simURL[strings.LastIndex(s.b.simURL, ":")+1:]+"/TCP"] = true
	got := map[string]bool{}
	for _, r := range np.Spec.Egress {
		if len(r.Ports) == 0 {
			t.Errorf("an egress rule without ports allows everything: %+v", r)
		}
		for _, p := range r.Ports {
			proto := "TCP"
			if p.Protocol != nil {
				proto = string(*p.Protocol)
			}
			got[p.Port.String()+"/"+proto] = true
		}
	}
	g := slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	})
	w := slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(g, w) {
		t.Errorf("egress ports %v, want %v", g, w)
	}
	return "stored egress ports " + strings.Join(g, " ")
}

// probeFrom runs dial with addrs in an ephemeral container named name of pod,
// waits for it to end and returns each address's outcome ("connected", or
// "blocked: <error>").
func (s *suite) probeFrom(t *testing.T, pod, name string, addrs []string) map[string]string {
	t.Helper()
	s.b.k(t, append([]string{"debug", "pod/" + pod, "-c", name, "--image=" + probeImage, "--image-pull-policy=Never",
		"--profile=restricted", "--", "/bin/dial"}, addrs...)...)
	deadline := time.Now().Add(time.Minute)
	for {
		var p corev1.Pod
		if err := json.Unmarshal([]byte(s.b.k(t, "get", "pod", pod, "-o", "json")), &p); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(p.Status.EphemeralContainerStatuses, func(c corev1.ContainerStatus) bool { return c.Name == name })
		if i >= 0 && p.Status.EphemeralContainerStatuses[i].State.Terminated != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe %s in %s did not end within a minute: %+v", name, pod, p.Status.EphemeralContainerStatuses)
		}
		time.Sleep(500 * time.Millisecond) // polling interval
	}
	return dialed(s.b.k(t, "logs", pod, "-c", name))
}

// probeUnselected runs dial addr in a pod of its own, without the chart's labels,
// and returns the outcome.
func (s *suite) probeUnselected(t *testing.T, addr string) string {
	t.Helper()
	const name = "netprobe-unselected"
	s.b.k(t, "run", name, "--image="+probeImage, "--image-pull-policy=Never", "--restart=Never",
		`--overrides={"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":65532}}}`, "--command", "--", "/bin/dial", addr)
	defer s.b.k(t, "delete", "pod", name, "--wait=false")
	s.b.k(t, "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/"+name, "--timeout=90s")
	return dialed(s.b.k(t, "logs", name))[addr]
}

// dialed parses dial's lines: address → outcome.
func dialed(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		addr, rest, _ := strings.Cut(line, " ")
		got[addr] = rest
	}
	return got
}
