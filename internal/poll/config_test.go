package poll

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// The durations that come from settings have their defaults in config/iparams.json
// only: New refuses them unset instead of inventing one.
func TestNewRefusesUnsetSettings(t *testing.T) {
	ok := Config{Account: "acme", Prefix: "callcenter", Intervals: map[string]time.Duration{ResCalls: time.Second},
		Backfill: time.Hour, MetricsLookback: time.Hour}
	for _, tt := range []struct {
		name  string
		edit  func(*Config)
		valid bool
	}{
		{"all set", func(*Config) {}, true},
		{"no backfill", func(c *Config) { c.Backfill = 0 }, false},
		{"no metrics look-back", func(c *Config) { c.MetricsLookback = 0 }, false},
		{"no interval", func(c *Config) { c.Intervals = nil }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, err := New(cfg, nil, nil, zerolog.Nop())
			if (err == nil) != tt.valid {
				t.Errorf("New: error %v, want valid %v", err, tt.valid)
			}
		})
	}
}
