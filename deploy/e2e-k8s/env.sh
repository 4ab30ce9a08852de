# env.sh: the paths every script of the harness shares (sourced, not run).
# S is the scratch directory (configuration, PKI, state, logs of the cluster):
# fixed, so that down.sh finds what a crashed run left.
K8S_VERSION=${K8S_VERSION:-1.37.2}
S=${CALLBUS_K8S_SCRATCH:-/var/tmp/callbus-e2e-k8s}
KBIN=${CALLBUS_K8S_CACHE:-$HOME/.cache/callbus-k8s}/v$K8S_VERSION/bin
# CALLBUS_K8S_NETPOL=kube-router (the default): kube-router's network policy
# controller runs on the node and the NetworkPolicy scenario probes the enforcement;
# set empty (CALLBUS_K8S_NETPOL=), the policy is only checked as stored.
NETPOL=${CALLBUS_K8S_NETPOL-kube-router}
KUBE_ROUTER_VERSION=${KUBE_ROUTER_VERSION:-v2.1.0}
KR_CACHE=${CALLBUS_K8S_CACHE:-$HOME/.cache/callbus-k8s}/kube-router-$KUBE_ROUTER_VERSION
NETNS=k8s                       # the recipe's name; 10.245.0.1/24 is the node
NODE_IP=10.245.0.1
NS="nsenter --net=/var/run/netns/$NETNS"   # not ip netns exec: it hides the cgroup mounts
CTR="ctr -a $S/run/containerd/containerd.sock -n k8s.io"
export KUBECONFIG=$S/pki/admin.kubeconfig
step() { echo "== e2e-k8s: $*"; STEP="$*"; }
die() { echo "e2e-k8s: FAILED at step \"$STEP\": $*" >&2; exit 1; }
