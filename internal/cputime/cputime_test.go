package cputime

import (
	"runtime"
	"testing"
)

// TestProcessGrowsWithWork: the CPU time grows while the process computes
// (where the platform reports it at all).
func TestProcessGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no CPU time on this platform")
	}
	before := Process()
	x := 1.0
	for i := 0; i < 2000 && Process() <= before; i++ {
		for j := 0; j < 1_000_000; j++ {
			x = x*1.0000001 + 1e-9
		}
	}
	if after := Process(); after <= before || x == 0 {
		t.Errorf("CPU time %v after a busy loop, %v before", after, before)
	}
}
