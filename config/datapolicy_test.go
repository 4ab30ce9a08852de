package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callbus/callbus/internal/iparams"
	"github.com/callbus/callbus/internal/policy"
)

const hashKey = "policy-key-0123456789abcdef"

func TestDataPolicySettings(t *testing.T) {
	keyFile := writeFile(t, "hash.key", hashKey+"\n")
	s, err := Load(minimal.with("CALLBUS_DATA_POLICY", "no_personal_data", "CALLBUS_DATA_POLICY_HASH_KEY_FILE", keyFile,
		"CALLBUS_DATA_POLICY_FIELDS", "users.email=mask, calls.call_notes=keep", "CALLBUS_DATA_POLICY_EVENTS", "call.*,metric.finalized").get, "")
	if err != nil {
		t.Fatal(err)
	}
	p := s.DataPolicy
	if p.ActionOf("users.email") != policy.Mask || p.ActionOf("calls.call_notes") != policy.Keep || p.ActionOf("users.phone") != policy.Hash {
		t.Errorf("policy %s", p)
	}
	if p.Wants("user.updated") || !p.Wants("call.ended") {
		t.Errorf("events of %s", p)
	}
	logged := fmt.Sprint(s.LogFields())
	if strings.Contains(logged, hashKey) || !strings.Contains(logged, p.Version()) {
		t.Errorf("logged %s", logged)
	}
	def, err := Load(minimal.get, "")
	if err != nil || def.DataPolicy != nil {
		t.Errorf("the default keeps everything: %v, %v", def.DataPolicy, err)
	}
}

func TestDataPolicyProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  env
		key  string
	}{
		{"hash without key", minimal.with("CALLBUS_DATA_POLICY", "no_personal_data"), "data_policy_hash_key"},
		{"unknown field", minimal.with("CALLBUS_DATA_POLICY_FIELDS", "calls.caller=drop"), "data_policy_fields"},
		{"unknown action", minimal.with("CALLBUS_DATA_POLICY_FIELDS", "users.email=encrypt"), "data_policy_fields"},
		{"field twice", minimal.with("CALLBUS_DATA_POLICY_FIELDS", "users.email=drop,users.email=mask"), "data_policy_fields"},
		{"unknown type", minimal.with("CALLBUS_DATA_POLICY_EVENTS", "call.deleted"), "data_policy_events"},
		{"unknown preset", minimal.with("CALLBUS_DATA_POLICY", "gdpr"), "data_policy"},
	} {
		_, err := Load(tc.env.get, "")
		var ps iparams.Problems
		if !errors.As(err, &ps) || !strings.Contains(err.Error(), "DATA_POLICY") {
			t.Errorf("%s: %v, want a problem with %s", tc.name, err, tc.key)
			continue
		}
		if strings.Contains(err.Error(), hashKey) {
			t.Errorf("%s: the key in %v", tc.name, err)
		}
	}
}

func TestAccountFileHashKey(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"acme.json": `{"api_url": "http://sim:8080", "api_key_file": "k", "data_policy": "no_personal_data", "data_policy_hash_key_file": "h"}`,
		"beta.json": `{"api_url": "http://sim:8080", "api_key_file": "k", "data_policy": "no_personal_data", "data_policy_hash_key_file": "h"}`,
		"k":         "api", "h": hashKey,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a, err := ReadAccountFile(dir, "acme.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadAccountFile(dir, "beta.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Settings.DataPolicy.HashValue("+15550100") == b.Settings.DataPolicy.HashValue("+15550100") {
		t.Error("two accounts given one key hash alike")
	}
	if err := os.WriteFile(filepath.Join(dir, "h"), []byte(hashKey+"-rotated"), 0o600); err != nil {
		t.Fatal(err)
	}
	rotated, err := ReadAccountFile(dir, "acme.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Digest == a.Digest || rotated.Settings.DataPolicy.Version() == a.Settings.DataPolicy.Version() {
		t.Error("a rotated key file changes neither the file's digest nor the policy's version")
	}
}
