package service

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
)

// Each option of the resources setting is a resource the poller knows (the
// names are poll's, declared once there and in iparams.json's options), and
// selecting it polls that resource alone, with the declared look-back and backfill.
func TestPollConfigResources(t *testing.T) {
	d, err := config.Declarations()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := d.Param("resources")
	if len(p.Options) == 0 {
		t.Fatal("resources declares no options")
	}
	for _, res := range p.Options {
		s := config.Settings{Account: "acme", SubjectPrefix: "callcenter", Resources: []string{res},
			CallsInterval: time.Second, OpenCallsInterval: time.Second, MetricsInterval: time.Second,
			UsersInterval: time.Second, TeamsInterval: time.Second, UserStatusesInterval: time.Second,
			MetricsLookback: time.Hour, CallsBackfill: 2 * time.Hour}
		cfg := pollConfig(s)
		if got := slices.Collect(maps.Keys(cfg.Intervals)); !slices.Equal(got, []string{res}) {
			t.Errorf("resources [%s]: the poller polls %v", res, got)
		}
		if cfg.MetricsLookback != s.MetricsLookback || cfg.Backfill != s.CallsBackfill {
			t.Errorf("resources [%s]: look-back %s, backfill %s; want %s, %s", res, cfg.MetricsLookback, cfg.Backfill, s.MetricsLookback, s.CallsBackfill)
		}
	}
}
