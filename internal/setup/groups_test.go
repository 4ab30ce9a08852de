package setup

import (
	"testing"

	"github.com/callbus/callbus/config"
)

// Every parameter of the poller lands in a named section, the required ones and
// the API address first; a key no prefix names would land in "other".
func TestEveryParameterHasASection(t *testing.T) {
	d, err := config.Declarations()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range d.Params() {
		g := groupOf(p)
		count[g]++
		if g == groupOther {
			t.Errorf("%s: no section (add its prefix to groups in groups.go)", p.Key)
		}
		if p.Required && g != groupRequired {
			t.Errorf("%s: required, but in section %s", p.Key, g)
		}
	}
	for _, g := range groups {
		if g.ID != groupOther && count[g.ID] == 0 {
			t.Errorf("section %s has no parameter", g.ID)
		}
	}
	for key, want := range map[string]string{
		"api_url": groupRequired, "api_domain": groupRequired, "api_key": groupRequired, "account": groupRequired,
		"resources": groupRequired, "rate_limit_share": "api", "nats_password": "nats", "redis_url": "redis",
		"subject_prefix": "stream", "calls_interval_seconds": "polling", "metrics_lookback_minutes": "polling",
		"teams_interval_seconds": "polling", "log_level": "operations", "shutdown_timeout_seconds": "operations",
	} {
		if p, _ := d.Param(key); groupOf(p) != want {
			t.Errorf("%s: section %s, want %s", key, groupOf(p), want)
		}
	}
}
