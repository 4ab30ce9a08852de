// Package deploy holds the tests of the Helm chart in helm/callbus: they render it
// with `helm template` for the default values and each file under helm/callbus/ci,
// decode every manifest strictly into the Kubernetes API types, and check what the
// chart promises (a hardened pod, probes, secrets only through a Secret, one leader
// and one standby by default). It is a module of its own so that the service's
// module does not depend on the Kubernetes API packages.
package deploy
