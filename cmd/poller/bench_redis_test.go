package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

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
