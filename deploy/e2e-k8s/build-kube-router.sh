#!/bin/bash
# build-kube-router.sh: builds kube-router $KUBE_ROUTER_VERSION from the Go module
# proxy into $CACHE (once; a second run finds it). The cluster runs only its
# network policy controller (iptables and ipset rules in netns k8s), so that the
# chart's NetworkPolicy is enforced, not only stored. v2.1.0 is the version the
# proxy serves here; security flaws are reported for it, which matters little for a
# test cluster inside a private network namespace, but take a newer one when
# served.
set -euo pipefail
. "$(dirname "$0")/env.sh"
mkdir -p "$KR_CACHE"
if [ -x "$KR_CACHE/kube-router" ]; then echo "build-kube-router: cached in $KR_CACHE"; exit 0; fi
start=$(date +%s)
GOBIN="$KR_CACHE" CGO_ENABLED=0 go install "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION"
echo "build-kube-router: built $KUBE_ROUTER_VERSION in $(( $(date +%s) - start ))s"
