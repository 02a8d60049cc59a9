//go:build unix

package registry_test

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user + system CPU time, so that benchmarks
// can report CPU per operation beside wall time (on a busy machine the wall
// time depends on the other load, the CPU time much less).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
