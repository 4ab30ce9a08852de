#!/bin/bash
# build-k8s.sh: builds the Kubernetes v$K8S_VERSION binaries (kube-apiserver,
# -controller-manager, -scheduler, kubelet, kube-proxy, kubectl) and CoreDNS from the
# Go module proxy into $CACHE/bin, once per version: a second run finds them and
# returns at once. k8s.io/kubernetes cannot be `go install`ed (its go.mod replaces the
# staging modules with directories the module zip leaves out), so the source is copied,
# the replace block dropped and each staging module pinned to its published v0.X.Y.
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-1.37.2}
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
CACHE=${CALLBUS_K8S_CACHE:-$HOME/.cache/callbus-k8s}/v$K8S_VERSION
BINS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
mkdir -p "$CACHE/bin"
have=1
for b in $BINS coredns; do [ -x "$CACHE/bin/$b" ] || have=0; done
if [ $have = 1 ]; then echo "build-k8s: cached in $CACHE/bin"; exit 0; fi
start=$(date +%s)
minor=${K8S_VERSION#*.}; minor=${minor%%.*}; staging=v0.${K8S_VERSION#*.}
if [ ! -d "$CACHE/src" ]; then
  dir=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "build-k8s: go mod download k8s.io/kubernetes@v$K8S_VERSION failed (Go proxy reachable?)" >&2; exit 1; }
  rm -rf "$CACHE/src.tmp"; cp -r "$dir" "$CACHE/src.tmp"; chmod -R u+w "$CACHE/src.tmp"
  ( cd "$CACHE/src.tmp"
    rm -f go.work go.work.sum
    # drop the replace ( ... ) block and pin every staging module to its release
    sed -i '/^replace (/,/^)/d' go.mod
    sed -i "s#^\(\s*k8s.io/[a-z0-9-]*\) v0.0.0\$#\1 $staging#" go.mod )
  mv "$CACHE/src.tmp" "$CACHE/src"
fi
LD="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
pkgs=""; for b in $BINS; do pkgs="$pkgs ./cmd/$b"; done
# one go build for all six: the ~2,000 shared packages compile once
( cd "$CACHE/src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "$LD" -o "$CACHE/bin/" $pkgs )
GOBIN="$CACHE/bin" CGO_ENABLED=0 go install "github.com/coredns/coredns@$COREDNS_VERSION"
echo "build-k8s: built v$K8S_VERSION + coredns $COREDNS_VERSION in $(( $(date +%s) - start ))s"
