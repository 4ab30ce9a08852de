//go:build e2ek8s

package e2ek8s

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// settings are the config values both releases share: the engines on the node's
// address, an R3 stream, a short lease and quick polling so that the scenarios
// see hand-offs and catch-up in seconds.
func (b *bed) settings() map[string]any {
	return map[string]any{
		"nats_url": b.nats.URLs(), "redis_url": b.redisURL(), "stream_replicas": 3,
		"lease_ttl_seconds": int(leaseTTL.Seconds()), "shutdown_timeout_seconds": 10,
		"calls_interval_seconds": 2, "open_calls_interval_seconds": 2, "metrics_interval_seconds": 2,
		"users_interval_seconds": 2, "teams_interval_seconds": 5, "user_statuses_interval_seconds": 30,
		"rate_limit_share": 100, "log_level": "info",
	}
}

// small are resources that fit three replicas and a solo pod on a 2-core node.
var small = map[string]any{"requests": map[string]any{"cpu": "20m", "memory": "48Mi"}, "limits": map[string]any{"memory": "256Mi"}}

// soloValues installs one account (acct001) with its key in a chart-made Secret.
func (b *bed) soloValues(t *testing.T) string {
	cfg := b.settings()
	cfg["account"], cfg["api_url"] = "acct001", b.apiURL("acct001")
	return writeValues(t, "solo", map[string]any{
		"replicaCount": 1, "config": cfg, "secret": map[string]any{"api_key": "key-acct001"}, "resources": small,
	})
}

// fleetValues installs a fleet of 3 replicas over the accounts directory Secret
// accountsSecret, with the NetworkPolicy (the API's port given, as an existing
// accounts Secret requires).
func (b *bed) fleetValues(t *testing.T) string {
	port := b.simURL[strings.LastIndex(b.simURL, ":")+1:]
	return writeValues(t, "fleet", map[string]any{
		"replicaCount": 3, "config": b.settings(), "existingAccountsSecret": accountsSecret, "resources": small,
		"networkPolicy": map[string]any{"enabled": true, "egress": map[string]any{
			"api": map[string]any{"ports": []any{map[string]any{"port": json.Number(port), "protocol": "TCP"}}}}},
	})
}

// writeValues writes v as a values file (JSON is YAML) and returns its path.
func writeValues(t *testing.T, name string, v any) string {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name+".json")
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// accountsSecret is the fleet's accounts directory: <account>.json and <account>.key.
const accountsSecret = "fleet-accounts"

// applyAccounts makes the accounts Secret hold exactly accounts, each with keys[a]
// (default key-<a>), through kubectl apply (an update of the same Secret, as a
// rotation is).
func (b *bed) applyAccounts(t *testing.T, accounts []string, keys map[string]string) {
	t.Helper()
	data := map[string]string{}
	for _, a := range accounts {
		body, _ := json.Marshal(map[string]any{"api_url": b.apiURL(a), "api_key_file": a + ".key"})
		data[a+".json"] = string(body)
		data[a+".key"] = "key-" + a
		if k, ok := keys[a]; ok {
			data[a+".key"] = k
		}
	}
	manifest := writeValues(t, "accounts-secret", map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata":   map[string]any{"name": accountsSecret, "namespace": ns},
		"stringData": data,
	})
	// replace (a PUT), not apply: stringData would merge into data, and a removed
	// account's files must go.
	if _, err := run(t.Context(), time.Minute, b.kubectl, "-n", ns, "get", "secret", accountsSecret); err != nil {
		b.k(t, "create", "-f", manifest)
		return
	}
	b.k(t, "replace", "-f", manifest)
}
