package diff

import (
	"syscall"
	"testing"
	"time"
)

// cpuMeter reports a benchmark's CPU time per operation (user and system, of
// every thread of the process, the garbage collector's included) beside its
// wall time: on a machine shared with other work the wall time counts the time
// the benchmark waited for a core, the CPU time does not.
func cpuMeter(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
