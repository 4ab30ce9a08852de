package service

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/callbus/callbus/config"
)

// /debug/pprof is served only when debug_pprof is set; the other routes are
// served either way.
func TestPprofOptIn(t *testing.T) {
	base := map[string]string{"CALLBUS_API_URL": "http://127.0.0.1:8080", "CALLBUS_API_KEY": "k", "CALLBUS_ACCOUNT": "acme"}
	inner := http.NewServeMux()
	inner.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	for _, tt := range []struct {
		name, value string
		want        int
	}{
		{"default", "", http.StatusNotFound},
		{"false", "false", http.StatusNotFound},
		{"true", "true", http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"CALLBUS_DEBUG_PPROF": tt.value}
			for k, v := range base {
				env[k] = v
			}
			s, err := config.Load(func(k string) string { return env[k] }, "")
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(withPprof(s.DebugPprof, inner))
			defer srv.Close()
			for path, want := range map[string]int{"/debug/pprof/": tt.want, "/debug/pprof/cmdline": tt.want, "/debug/pprof/heap?debug=1": tt.want, "/healthz": http.StatusOK} {
				resp, err := http.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
				}
			}
		})
	}
}
