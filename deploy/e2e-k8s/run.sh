#!/bin/bash
# run.sh (make e2e-k8s): the chart on a real one-node Kubernetes, from nothing:
# Debian packages, the Kubernetes build (cached per version), the cluster (up.sh),
# the scenarios (this directory's Go test, tag e2ek8s, run inside the node's
# network namespace), the results table, and the teardown (down.sh), which also
# runs on failure or interrupt. Prints how long each part took.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/env.sh"
times=()
timed() { # label command...: runs command, noting how long it took under label
  local s=$(date +%s) label=$1; shift
  "$@" || return $?
  times+=("$label $(( $(date +%s) - s ))s")
}
report() {
  [ -f "$S/results.md" ] && cp "$S/results.md" "$REPO/bin/e2e-k8s-results.md"
  step "teardown"
  "$HERE/down.sh" || echo "e2e-k8s: teardown left something (see above)" >&2
  echo "== e2e-k8s times: ${times[*]}"
}

STEP="Debian packages"
need=()
pkgs="etcd-server containerd runc containernetworking-plugins iptables busybox-static"
[ -z "$NETPOL" ] || pkgs="$pkgs ipset"
for p in $pkgs; do
  dpkg -s $p >/dev/null 2>&1 || need+=($p)
done
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || die "apt-get install ${need[*]}"
fi
mkdir -p "$REPO/bin"
step "building Kubernetes v$K8S_VERSION and CoreDNS (cached in $KBIN)"
kube() { "$HERE/build-k8s.sh"; }
timed k8s-build kube || die "build-k8s.sh"
case "$NETPOL" in
  "") ;;
  kube-router)
    step "building kube-router $KUBE_ROUTER_VERSION, the network policy controller (cached in $KR_CACHE)"
    router() { "$HERE/build-kube-router.sh"; }
    timed kube-router-build router || die "build-kube-router.sh" ;;
  *) die "CALLBUS_K8S_NETPOL=$NETPOL: want kube-router or nothing" ;;
esac
step "building helm"
helm_bin() { make -C "$REPO" --no-print-directory bin/helm >/dev/null; }
timed helm-build helm_bin || die "make bin/helm"
step "building the scenarios' test"
testbin() { (cd "$REPO/deploy" && go test -c -tags e2ek8s -o "$REPO/bin/e2e-k8s.test" ./e2e-k8s); }
timed test-build testbin || die "go test -c ./e2e-k8s"

# a crashed run's leftovers first, then ours at the end whatever happens
"$HERE/down.sh" >/dev/null 2>&1 || true
trap report EXIT
trap 'exit 130' INT TERM
cluster() { "$HERE/up.sh"; }
timed cluster-up cluster
step "scenarios"
scenarios() {
  (cd "$HERE" && E2E_KUBECTL="$KBIN/kubectl" E2E_HELM="$REPO/bin/helm" E2E_CHART="$REPO/deploy/helm/callbus" \
    E2E_RESULTS="$S/results.md" E2E_NETPOL="$NETPOL" E2E_KUBE_ROUTER_VERSION="$KUBE_ROUTER_VERSION" $NS "$REPO/bin/e2e-k8s.test" -test.v -test.count=1 -test.timeout=40m)
}
timed scenarios scenarios || die "scenarios failed (the table above says which)"
