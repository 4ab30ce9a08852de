// Package e2ek8s is the end-to-end test of the Helm chart on a real Kubernetes
// cluster (make e2e-k8s): run.sh builds and starts a one-node cluster inside a
// network namespace (up.sh) and runs this package's test, built with the e2ek8s
// tag, inside it. The test starts NATS (a 3-node JetStream cluster), Redis and the
// multi-account simulator as processes on the node's address 10.245.0.1, installs
// the chart as a single-account release and as a fleet, fails pods over, upgrades,
// rotates keys, drains the node, rolls back and uninstalls, audits every account's
// events against the simulator's truth, and prints a table of what held.
// Without the tag (make chart's go test ./...) the package is empty.
package e2ek8s
