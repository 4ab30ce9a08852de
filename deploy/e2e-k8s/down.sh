#!/bin/bash
# down.sh: tears down everything up.sh started, whatever state a run (or a crash)
# left it in; running it twice is harmless. Stops the processes by their pid files,
# the pods' containers and shims, unmounts what is under the scratch directory and the
# pods' network namespaces, deletes netns k8s, removes the kubepods cgroups and the
# kubelet's and CNI's host directories, then the scratch directory.
. "$(dirname "$0")/env.sh"
stop() {
  for n in "$@"; do
    f=$S/run/$n.pid; [ -f "$f" ] || continue
    p=$(cat "$f")
    if kill "$p" 2>/dev/null; then
      for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
      kill -9 "$p" 2>/dev/null
    fi
    rm -f "$f"
  done
}
# the scenarios' test, and the redis-server it started on the node's address
# (an interrupted test runs no cleanup)
for p in $(pgrep -f "bin/e2e-k8s\.test -test\.v") $(pgrep -f "redis-server $NODE_IP:"); do kill "$p" 2>/dev/null; done
stop kube-router kube-proxy kubelet kube-scheduler kube-controller-manager coredns
if [ -S "$S/run/containerd/containerd.sock" ]; then
  for t in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks kill -s KILL "$t" 2>/dev/null; done
  sleep 1
  for t in $($CTR tasks ls -q 2>/dev/null); do $CTR tasks rm -f "$t" 2>/dev/null; done
  for c in $($CTR containers ls -q 2>/dev/null); do $CTR containers rm "$c" 2>/dev/null; done
fi
stop containerd kube-apiserver etcd
# shims outlive containerd: only those serving our socket
for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $S/run/containerd/containerd.sock"); do kill -9 "$p" 2>/dev/null; done
# container processes whose shim died: by their cgroup
for c in /sys/fs/cgroup/pids/kubepods; do [ -d "$c" ] && find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null; done
for m in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^$S/|^/run/netns/cni-|^/var/lib/kubelet" | sort -r); do umount -l "$m" 2>/dev/null; done
for n in /run/netns/cni-*; do [ -e "$n" ] && { umount -l "$n" 2>/dev/null; rm -f "$n"; }; done
ip netns del "$NETNS" 2>/dev/null
for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods; do
  [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
done
rm -rf /var/lib/kubelet /var/lib/cni/networks/podnet /var/log/pods /var/log/containers "$S"
# `ip netns add` bind-mounts /run/netns when nothing had: undo that only if up.sh
# recorded it and no other namespace (another user's) lives there now.
if [ -f /run/callbus-e2e-k8s-netns-mount ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
  umount /run/netns 2>/dev/null
fi
rm -f /run/callbus-e2e-k8s-netns-mount
left=$(pgrep -f "$S/" || true)
[ -z "$left" ] || { echo "down.sh: processes still running under $S: $left" >&2; exit 1; }
ip netns list 2>/dev/null | grep -qw "^$NETNS" && { echo "down.sh: netns $NETNS still there" >&2; exit 1; }
exit 0
