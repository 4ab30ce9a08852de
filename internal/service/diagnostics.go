package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/secret"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// redisSettings are the Redis settings callbus checks at start (the eviction
// policy and persistence, cursor.Store.CheckConfig) and those that decide how
// small its keys stay (listpack limits), for a debug bundle.
var redisSettings = []string{"maxmemory", "maxmemory-policy", "appendonly", "appendfsync", "save",
	"hash-max-listpack-entries", "hash-max-listpack-value", "zset-max-listpack-entries"}

// Diagnostics collects what a debug bundle holds of Redis and NATS: INFO, the
// CONFIG GET of redisSettings, and the stream's info, as files by name. What
// cannot be read is in the returned problems, not an error: a bundle is most
// wanted when something is down.
func Diagnostics(ctx context.Context, s config.Settings) (files map[string][]byte, problems []string) {
	files = map[string][]byte{}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rdb, err := connectRedis(s)
	if err != nil {
		problems = append(problems, "redis: "+err.Error())
	} else {
		defer rdb.Close()
		if info, err := rdb.Info(ctx, "all").Result(); err != nil {
			problems = append(problems, "redis INFO: "+err.Error())
		} else {
			files["redis/info.txt"] = []byte(info)
		}
		cfg := map[string]string{}
		for _, name := range redisSettings {
			m, err := rdb.ConfigGet(ctx, name).Result()
			if err != nil {
				problems = append(problems, fmt.Sprintf("redis CONFIG GET %s: %v", name, err))
				continue
			}
			for k, v := range m {
				cfg[k] = v
			}
		}
		files["redis/config.json"], _ = json.MarshalIndent(cfg, "", "  ")
	}
	nc, err := nats.Connect(strings.TrimSpace(s.NATSURL), append(natsAuth(s), nats.Timeout(3*time.Second), nats.Name("callbus-debug-bundle"))...)
	if err != nil {
		return files, append(problems, fmt.Sprintf("nats at %s: %v", redactURL(s.NATSURL), err))
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err == nil {
		var st jetstream.Stream
		if st, err = js.Stream(ctx, s.StreamName); err == nil {
			files["nats/stream.json"], err = json.MarshalIndent(st.CachedInfo(), "", "  ")
		}
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("nats stream %s: %v", s.StreamName, err))
	}
	return files, problems
}

// Secrets returns the values of every secret setting of each of ss (every field
// of type secret.Value, so a secret added to Settings is covered without a
// change here), for a bundle to scrub whatever it collected of them.
func Secrets(ss ...config.Settings) []string {
	var out []string
	for _, s := range ss {
		v := reflect.ValueOf(s)
		for i := range v.NumField() {
			switch f := v.Field(i).Interface().(type) {
			case secret.Value:
				if f.Reveal() != "" {
					out = append(out, f.Reveal())
				}
			case string: // URLs with a password in them: redis://:pw@host, nats://u:pw@host
				for _, raw := range strings.Split(f, ",") {
					if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
						if pw, ok := u.User.Password(); ok && pw != "" {
							out = append(out, pw, url.QueryEscape(pw))
						}
					}
				}
			}
		}
	}
	return out
}
