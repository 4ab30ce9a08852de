#!/bin/bash
# images.sh REPO OUT: the three images the chart's pods run, as one-layer OCI
# archives (mkimage.py) for `ctr images import`: the pod sandbox (pause), the poller
# as the chart's default image (a static build of cmd/poller with -tags nodemo, the
# Dockerfile's build, entrypoint /poller) and the test pod's busybox with a wget
# that honours -T (Debian's busybox wget crashes on it), and dial, the
# NetworkPolicy scenario's probe.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$1 OUT=$2
tag=$(sed -n 's/^appVersion: "\(.*\)"/\1/p' "$REPO/deploy/helm/callbus/Chart.yaml")
busytag=$(sed -n '/^tests:/,$ s/^    tag: "\(.*\)"/\1/p' "$REPO/deploy/helm/callbus/values.yaml" | head -1)
root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
export CGO_ENABLED=0
mkdir -p "$root/pause" "$root/poller" "$root/busybox/bin"
(cd "$REPO/deploy" && go build -trimpath -o "$root/pause/pause" ./e2e-k8s/images/pause)
(cd "$REPO" && go build -tags nodemo -trimpath -ldflags "-s -w -X main.version=e2e-k8s" -o "$root/poller/poller" ./cmd/poller)
(cd "$REPO/deploy" && go build -trimpath -o "$root/busybox/bin/wget" ./e2e-k8s/images/wget)
(cd "$REPO/deploy" && go build -trimpath -o "$root/busybox/bin/dial" ./e2e-k8s/images/dial)
cp "$(command -v busybox)" "$root/busybox/bin/busybox"
for a in seq sleep echo cat; do ln -s busybox "$root/busybox/bin/$a"; done
# Debian's static busybox shell runs its own applets before PATH (its wget, which
# crashes on -T): the test pod's sh is dash, with the libraries it links.
cp /bin/dash "$root/busybox/bin/sh"
for lib in $(ldd /bin/dash | grep -o '/[^ ]*'); do mkdir -p "$root/busybox$(dirname "$lib")"; cp -L "$lib" "$root/busybox$lib"; done
mkdir -p "$root/poller/tmp"
python3 "$HERE/images/mkimage.py" "$OUT/pause.tar" registry.k8s.io/pause:3.10 "$root/pause" /pause >/dev/null
python3 "$HERE/images/mkimage.py" "$OUT/poller.tar" "ghcr.io/callbus/poller:$tag" "$root/poller" /poller >/dev/null
python3 "$HERE/images/mkimage.py" "$OUT/busybox.tar" "busybox:$busytag" "$root/busybox" >/dev/null
