package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decodeError decodes the {"error": …} a command printed in JSON mode.
func decodeError(t *testing.T, out []byte) jsonError {
	t.Helper()
	var v map[string]jsonError
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not a JSON error: %v\n%s", err, out)
	}
	return v["error"]
}

// config validate --json: {"valid": true, …}, or the error as JSON naming each
// setting (the variable, or the file and its entry) to fix; a usage error is
// JSON too, with its exit status.
func TestConfigValidateJSON(t *testing.T) {
	good := map[string]string{"CALLBUS_API_URL": "http://127.0.0.1:8080", "CALLBUS_API_KEY": "sk-json-test-key", "CALLBUS_ACCOUNT": "acme"}
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"config", "validate", "--json"}, env(good), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var ok struct {
		Valid    bool     `json:"valid"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &ok); err != nil || !ok.Valid || ok.Warnings == nil {
		t.Errorf("valid: %v %+v\n%s", err, ok, out.String())
	}

	file := filepath.Join(t.TempDir(), "values.json")
	if err := os.WriteFile(file, []byte(`{"calls_interval_seconds": -4}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err := run(t.Context(), []string{"config", "validate", "--json", "--config", file}, env(map[string]string{"CALLBUS_ACCOUNT": "acme"}), &out, &errOut)
	if exitStatus(err) != 2 {
		t.Errorf("invalid: exit %d (%v), want 2", exitStatus(err), err)
	}
	je := decodeError(t, out.Bytes())
	if je.Code != "invalid_configuration" || je.ExitCode != 2 {
		t.Errorf("invalid: %+v", je)
	}
	var apiKey, interval bool
	for _, p := range je.Problems {
		apiKey = apiKey || (p.Key == "api_key" && strings.Contains(p.Setting, "CALLBUS_API_KEY") && strings.Contains(p.Message, "required"))
		interval = interval || (p.Key == "calls_interval_seconds" && p.File == file)
	}
	if !apiKey || !interval {
		t.Errorf("problems %+v: want api_key by its variable and calls_interval_seconds in %s", je.Problems, file)
	}
	if strings.Contains(out.String(), "sk-json-test-key") {
		t.Error("a secret in the JSON error")
	}

	out.Reset()
	err = run(t.Context(), []string{"state", "rewind", "--json"}, env(good), &out, &errOut)
	if je := decodeError(t, out.Bytes()); je.Code != "usage" || je.ExitCode != 2 || exitStatus(err) != 2 {
		t.Errorf("usage error: %+v (%v)", je, err)
	}
}
