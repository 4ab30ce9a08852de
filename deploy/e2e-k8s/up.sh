#!/bin/bash
# up.sh: a one-node Kubernetes inside netns k8s (node 10.245.0.1), from nothing to a
# Ready node with CoreDNS, and the images the chart uses imported into containerd.
# Needs: the binaries of build-k8s.sh, bin/helm, the Debian packages of run.sh.
# Each step names itself; a failure names the step and the log to read.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/env.sh"

step "checking the machine"
for t in etcd containerd runc ctr iptables nsenter openssl python3 busybox ${NETPOL:+ipset}; do
  command -v $t >/dev/null || die "$t not found (run.sh installs etcd-server containerd runc containernetworking-plugins iptables busybox-static, and ipset with CALLBUS_K8S_NETPOL)"
done
[ -x /usr/lib/cni/bridge ] || die "/usr/lib/cni/bridge not found (Debian's containernetworking-plugins)"
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns; do
  [ -x "$KBIN/$b" ] || die "$KBIN/$b not found (build-k8s.sh builds it)"
done
[ -z "$NETPOL" ] || [ -x "$KR_CACHE/kube-router" ] || die "$KR_CACHE/kube-router not found (build-kube-router.sh builds it)"
[ "$(id -u)" = 0 ] || die "needs root (network namespace, mounts, cgroups)"
ip netns list 2>/dev/null | grep -qw "^$NETNS" && die "netns $NETNS exists: a run is going on, or run down.sh"

step "scratch directory $S"
mkdir -p "$S/run" "$S/node/cni" "$S/images"
ln -sfn "$KBIN" "$S/bin"
"$HERE/pki.sh" "$S/pki"
for f in containerd.toml kubelet.yaml Corefile; do sed "s|@S@|$S|g" "$HERE/node/$f" >"$S/node/$f"; done
cp "$HERE/node/10-bridge.conflist" "$S/node/cni/"

step "network namespace $NETNS, node $NODE_IP/24"
mountpoint -q /run/netns 2>/dev/null || touch /run/callbus-e2e-k8s-netns-mount
ip netns add "$NETNS"
ip -n "$NETNS" link set lo up
# The kubelet refuses a loopback node IP and the dummy link type is missing here:
# the node's address lives on an empty bridge.
ip -n "$NETNS" link add node0 type bridge
ip -n "$NETNS" addr add "$NODE_IP/24" dev node0
ip -n "$NETNS" link set node0 up
ip -n "$NETNS" route add default dev node0
$NS sysctl -qw net.ipv4.ip_forward=1

start() { # name command...: in the namespace, logged to run/NAME.log
  local n=$1; shift
  $NS nice -n 10 "$@" >"$S/run/$n.log" 2>&1 &
  echo $! >"$S/run/$n.pid"
}
waitfor() { # what seconds command...
  local what=$1 secs=$2; shift 2
  for _ in $(seq $((secs * 2))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  die "$what not ready after ${secs}s (logs: $S/run/*.log)"
}
P=$S/pki
step "etcd"
start etcd etcd --name local --data-dir "$S/run/etcd" --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
  --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster local=http://127.0.0.1:2380
waitfor etcd 60 $NS bash -c "echo >/dev/tcp/127.0.0.1/2379"

step "kube-apiserver"
# --advertise-address: a loopback one is refused for the kubernetes Endpoints.
start kube-apiserver "$S/bin/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=0.0.0.0 --advertise-address=$NODE_IP --secure-port=6443 \
  --service-cluster-ip-range=10.0.0.0/24 \
  --client-ca-file=$P/ca.crt --tls-cert-file=$P/apiserver.crt --tls-private-key-file=$P/apiserver.key \
  --kubelet-client-certificate=$P/admin.crt --kubelet-client-key=$P/admin.key --kubelet-certificate-authority=$P/ca.crt \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file=$P/sa.pub --service-account-signing-key-file=$P/sa.key \
  --authorization-mode=Node,RBAC --allow-privileged=true \
  --enable-priority-and-fairness=false --profiling=false \
  --kubelet-preferred-address-types=InternalIP --cert-dir="$S/run/apiserver-certs"
waitfor kube-apiserver 120 $NS "$S/bin/kubectl" get --raw /readyz

step "controller-manager, scheduler, containerd"
start kube-controller-manager "$S/bin/kube-controller-manager" --kubeconfig=$P/controller-manager.kubeconfig \
  --authentication-kubeconfig=$P/controller-manager.kubeconfig --authorization-kubeconfig=$P/controller-manager.kubeconfig \
  --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
  --service-account-private-key-file=$P/sa.key --root-ca-file=$P/ca.crt \
  --cluster-signing-cert-file=$P/ca.crt --cluster-signing-key-file=$P/ca.key \
  --service-cluster-ip-range=10.0.0.0/24 --cluster-cidr=10.244.0.0/16 --allocate-node-cidrs=false
start kube-scheduler "$S/bin/kube-scheduler" --kubeconfig=$P/scheduler.kubeconfig \
  --authentication-kubeconfig=$P/scheduler.kubeconfig --authorization-kubeconfig=$P/scheduler.kubeconfig \
  --bind-address=127.0.0.1 --leader-elect=false
mkdir -p "$S/run/containerd"
start containerd containerd --config "$S/node/containerd.toml"
waitfor containerd 60 $CTR version

step "images (built here, imported without a registry)"
"$HERE/images.sh" "$REPO" "$S/images"
for f in "$S"/images/*.tar; do $CTR images import "$f" >/dev/null || die "ctr import $f"; done

step "kubelet, kube-proxy, CoreDNS"
mkdir -p "$S/run/kubelet"
start kubelet "$S/bin/kubelet" --config="$S/node/kubelet.yaml" --kubeconfig=$P/kubelet.kubeconfig \
  --hostname-override=local --node-ip=$NODE_IP --root-dir="$S/run/kubelet" --cert-dir="$S/run/kubelet/pki" --v=1
start kube-proxy "$S/bin/kube-proxy" --kubeconfig=$P/kube-proxy.kubeconfig --hostname-override=local \
  --proxy-mode=iptables --cluster-cidr=10.244.0.0/16 --masquerade-all --conntrack-max-per-core=0 \
  --bind-address=$NODE_IP --healthz-bind-address=127.0.0.1:10256 --metrics-bind-address=127.0.0.1:10249
start coredns "$S/bin/coredns" -conf "$S/node/Corefile"
K="$NS $S/bin/kubectl"
waitfor "kube-system namespace" 60 $K get ns kube-system
$K apply -f "$HERE/node/kube-dns.yaml" -f "$HERE/node/crd-prometheusrules.yaml" -f "$HERE/node/crd-servicemonitors.yaml" >/dev/null
waitfor "node local" 120 $K wait --for=condition=Ready node/local --timeout=2s
# CoreDNS through its Service IP: proves the process, its kubeconfig context and
# kube-proxy's rules at once (a CoreDNS that exited shows in the pods only as timeouts).
waitfor "CoreDNS at 10.0.0.10 (log $S/run/coredns.log)" 60 $NS busybox nslookup kubernetes.default.svc.cluster.local 10.0.0.10
if [ "$NETPOL" = kube-router ]; then
  # kube-router's network policy controller alone (no routing, no service proxy, no CNI
  # of its own): it enforces NetworkPolicies with iptables and ipsets, on the bridge's
  # traffic (physdev) and on the pods' traffic to the node's own address. Started once
  # the node is registered: without its Node object it exits ("failed to identify the
  # node by NODE_NAME, hostname or --hostname-override").
  start kube-router "$KR_CACHE/kube-router" --kubeconfig=$P/admin.kubeconfig --hostname-override=local \
    --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
    --service-cluster-ip-range=10.0.0.0/24 --health-port=0
  # hooked into the filter table's chains: policies are enforced from now.
  waitfor "kube-router's network policy chains (log $S/run/kube-router.log)" 60 $NS bash -c "iptables -w -S FORWARD | grep -q KUBE-ROUTER-FORWARD"
fi
echo "e2e-k8s: cluster up (node local Ready)"
