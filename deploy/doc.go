// Package deploy holds the Helm chart's tooling for helm/callbus. HelmValuesSchema
// generates the chart's values.schema.json from the service's declaration
// (config/iparams.json, through a replace directive to this checkout), and a test
// fails while the checked-in file is stale (`go test -update` rewrites it). The
// other tests render the chart with `helm template` for the default values and
// each file under helm/callbus/ci, decode every manifest strictly into the
// Kubernetes API types, and check what the chart promises (a hardened pod, probes,
// secrets only through a Secret, one leader and one standby by default). It is a
// module of its own so that the service's module does not depend on the Kubernetes
// API packages.
package deploy

// The chart's values.schema.json and dashboard are rendered by this package.
//go:generate go test -count=1 -run ^(TestHelmValuesSchemaUpToDate|TestDashboardUpToDate)$ -update .
