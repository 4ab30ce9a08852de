package deploy

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/iparams/schematest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// update rewrites the generated schema instead of comparing: go test -update
var update = flag.Bool("update", false, "rewrite helm/callbus/values.schema.json")

var helmSchemaPath = filepath.Join(chartDir, "values.schema.json")

// The chart's checked-in values.schema.json is the one HelmValuesSchema renders
// (`go test -update` in deploy/ rewrites it).
func TestHelmValuesSchemaUpToDate(t *testing.T) {
	want, err := HelmValuesSchema()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(helmSchemaPath)
	if err != nil && !*update {
		t.Fatalf("%v: run `go test -update` in deploy/", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	if *update {
		if err := os.WriteFile(helmSchemaPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale: run `go test -update` in deploy/", helmSchemaPath)
}

// The chart schema is a valid draft-07 schema that takes a full values object and
// refuses typos, secure settings in the ConfigMap's config, chart-owned keys and
// values the declaration refuses.
func TestHelmValuesSchema(t *testing.T) {
	schema := compileHelmSchema(t)
	good := `{
		"image": {"repository": "ghcr.io/callbus/poller", "tag": "", "digest": "", "pullPolicy": "IfNotPresent"},
		"replicaCount": 2,
		"config": {"account": "acme", "api_domain": "acme", "nats_url": "nats://nats:4222",
			"redis_url": "redis://redis:6379/0", "resources": ["calls", "teams"], "stream_replicas": 3},
		"secret": {"api_key": "k", "nats_password": "", "redis_password": "p w"},
		"existingSecret": {"name": "", "keys": {"api_key": "api-key", "nats_password": "", "redis_password": ""}},
		"terminationGracePeriodSeconds": null,
		"serviceMonitor": {"enabled": true, "interval": "1m30s", "scrapeTimeout": "10s", "labels": {"release": "prom"}},
		"networkPolicy": {"enabled": true, "egress": {"nats": {"ports": [{"port": 4222, "protocol": "TCP"}],
			"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "nats"}}}]}}},
		"podDisruptionBudget": {"enabled": true, "minAvailable": "50%"},
		"podAntiAffinity": "hard"
	}`
	schematest.Check(t, schema, true, good)
	schematest.Check(t, schema, false,
		`{"replicas": 2}`,
		`{"replicaCount": "2"}`,
		`{"config": {"api_key": "k"}}`,
		`{"config": {"redis_password": "p"}}`,
		`{"config": {"instance_id": "poller-0"}}`,
		`{"config": {"http_addr": ":9090"}}`,
		`{"config": {"stream_replicas": 6}}`,
		`{"config": {"account": "acme.eu"}}`,
		`{"config": {"resources": ["recordings"]}}`,
		`{"config": {"unknown": 1}}`,
		`{"secret": {"api_key": "two words"}}`,
		`{"secret": {"token": "t"}}`,
		`{"existingSecret": {"name": "Not_A_Name"}}`,
		`{"existingSecret": {"keys": {"api_key": "a/b"}}}`,
		`{"image": {"digest": "latest"}}`,
		`{"serviceMonitor": {"interval": "30"}}`,
		`{"podAntiAffinity": "always"}`,
		`{"terminationGracePeriodSeconds": 0}`,
		`{"podDisruptionBudget": {"minAvailable": 1, "maxUnavailable": 1}}`,
		`{"podDisruptionBudget": {"maxUnavailable": "half"}}`,
		`{"accounts": {"acme.eu": {"api_domain": "acme"}}}`,
		`{"accounts": {"acme": {"api_domian": "acme"}}}`,
		`{"accounts": {"acme": {"instance_id": "x"}}}`,
		`{"accounts": {"acme": {"nats_password": "x"}}}`,
		`{"accounts": {"acme": {"rate_limit_share": 0}}}`,
		`{"accountKeysSecret": "Not_A_Name"}`,
		`{"nats": {"credsSecret": {"name": "n", "key": "a/b"}}}`,
	)
	schematest.Check(t, schema, true,
		`{"podDisruptionBudget": {"enabled": true, "minAvailable": null, "maxUnavailable": "25%"}}`,
		`{"podDisruptionBudget": {"enabled": true, "minAvailable": null, "maxUnavailable": null}}`,
		`{"podDisruptionBudget": {"minAvailable": 1}}`,
		`{"accounts": {"acme": {"api_domain": "acme", "api_key": "k", "rate_limit_share": 50, "resources": ["calls"]}, "globex_2": null}}`,
		`{"accountKeysSecret": "keys", "existingAccountsSecret": "", "nats": {"credsSecret": {"name": "n", "key": "c.creds"}}}`,
	)
}

// Every parameter is in exactly one place of the chart's values: config, or
// secret and existingSecret.keys, or set by the chart.
func TestHelmValuesSchemaCoversEveryParameter(t *testing.T) {
	d, err := config.Declarations()
	if err != nil {
		t.Fatal(err)
	}
	data, err := HelmValuesSchema()
	if err != nil {
		t.Fatal(err)
	}
	type props struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var root struct {
		Properties struct {
			Config, Secret props
			Existing       struct {
				Properties struct{ Keys props } `json:"properties"`
			} `json:"existingSecret"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	for _, k := range chartOwnedKeys {
		if _, ok := d.Param(k); !ok {
			t.Errorf("chart-owned key %s is not declared in iparams.json", k)
		}
	}
	for _, p := range d.Params() {
		_, inConfig := root.Properties.Config.Properties[p.Key]
		_, inSecret := root.Properties.Secret.Properties[p.Key]
		_, inKeys := root.Properties.Existing.Properties.Keys.Properties[p.Key]
		owned := slices.Contains(chartOwnedKeys, p.Key)
		switch {
		case p.Secure && (!inSecret || !inKeys || inConfig):
			t.Errorf("secure %s: in secret %v, in existingSecret.keys %v, in config %v; want true, true, false", p.Key, inSecret, inKeys, inConfig)
		case !p.Secure && (inSecret || inKeys || inConfig == owned):
			t.Errorf("%s: in config %v (chart-owned %v), in secret %v", p.Key, inConfig, owned, inSecret || inKeys)
		}
	}
}

func compileHelmSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := HelmValuesSchema()
	if err != nil {
		t.Fatal(err)
	}
	return schematest.Compile(t, data)
}
