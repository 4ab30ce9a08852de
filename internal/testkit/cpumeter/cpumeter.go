// Package cpumeter measures benchmarks in CPU time: on a machine shared with
// other work a benchmark's wall time counts the time it waited for a core, its
// CPU time does not. For tests and benchmarks only.
package cpumeter

import (
	"syscall"
	"testing"
	"time"
)

// Process is the CPU time (user and system) this process has used so far: every
// thread's, the garbage collector's included; not that of the processes it
// started (a redis-server, a poller binary), which have their own.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PerOp starts measuring b's CPU time; the function it returns, called after the
// benchmark's loop, reports it per operation as cpu-ns/op beside the wall time.
func PerOp(b *testing.B) func() {
	start := Process()
	return func() { b.ReportMetric(float64(Process()-start)/float64(b.N), "cpu-ns/op") }
}
