package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/callbus/callbus/internal/cursor"
)

// redisReport is redisCommandTimes and the account's Redis memory by family of
// keys (cursor.Store.MemoryUsage), per event; it also writes them to stderr,
// whole: go test cuts a benchmark's log after its first lines.
func redisReport(b testing.TB, rdb *redis.Client, store *cursor.Store, events float64) string {
	b.Helper()
	times := redisCommandTimes(b, rdb, events)
	total, per, err := store.MemoryUsage(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Redis memory of the account by family of keys (%d B in all):", total)
	names := slices.Sorted(maps.Keys(per))
	slices.SortStableFunc(names, func(x, y string) int { return cmp.Compare(per[y], per[x]) })
	for _, name := range names {
		fmt.Fprintf(&sb, "\n  %-16s %12d B", name, per[name])
	}
	out := times + "\n" + sb.String()
	fmt.Fprintln(os.Stderr, out)
	return out
}

// redisCPU is the CPU seconds (user + system) the Redis server has used since it
// started, from INFO cpu: read before and after a run, the difference is what the
// run cost Redis (the commit and outbox scripts, the reads), which the poller's
// own CPU figure leaves out.
func redisCPU(b testing.TB, rdb *redis.Client) float64 {
	b.Helper()
	info, err := rdb.Info(b.Context(), "cpu").Result()
	if err != nil {
		b.Fatalf("redis INFO cpu: %v", err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("redis INFO cpu: %s: %v", line, err)
			}
			total += f
		}
	}
	return total
}

// redisCommandTimes says where Redis spent its time during a run, from INFO
// commandstats (reset by the caller before the run): each command's calls and
// microseconds, the commands the scripts call included, most expensive first,
// per event.
func redisCommandTimes(b testing.TB, rdb *redis.Client, events float64) string {
	b.Helper()
	info, err := rdb.Info(b.Context(), "commandstats").Result()
	if err != nil {
		b.Fatalf("redis INFO commandstats: %v", err)
	}
	type stat struct {
		name        string
		calls, usec float64
	}
	var stats []stat
	for _, line := range strings.Split(info, "\n") {
		// cmdstat_xadd:calls=481756,usec=1234,usec_per_call=...,...
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		s := stat{name: strings.TrimPrefix(name, "cmdstat_")}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				s.calls = f
			case "usec":
				s.usec = f
			}
		}
		stats = append(stats, s)
	}
	slices.SortFunc(stats, func(x, y stat) int { return cmp.Compare(y.usec, x.usec) })
	var sb strings.Builder
	for _, s := range stats[:min(len(stats), 10)] {
		fmt.Fprintf(&sb, "\n  %-12s %9.0f calls %8.3f s  %6.2f µs per event", s.name, s.calls, s.usec/1e6, s.usec/events)
	}
	return "Redis time by command (a script's time includes the commands it calls):" + sb.String()
}
