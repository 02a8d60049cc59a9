package experiment

import (
	"fmt"
	"testing"
	"time"
)

// TestSweepOrderCoarseFirst: the first trial visits the grid coarse to fine
// and every (point, trial) exactly once.
func TestSweepOrderCoarseFirst(t *testing.T) {
	order := sweepOrder(100, 3)
	if len(order) != 300 {
		t.Fatalf("%d tasks", len(order))
	}
	seen := map[sweepTask]bool{}
	for _, task := range order {
		if seen[task] {
			t.Fatalf("task %v twice", task)
		}
		seen[task] = true
	}
	// After 10 tasks the first trial spans the whole grid with gaps ≤ 32.
	var pts []int
	for _, task := range order[:10] {
		pts = append(pts, task.point)
	}
	if fmt.Sprint(pts[:4]) != "[0 99 64 32]" {
		t.Errorf("first tasks %v", pts)
	}
	for _, task := range order[:100] {
		if task.trial != 0 {
			t.Fatalf("a later trial before the first is complete: %v", task)
		}
	}
}

// TestProgressETA checks the ETA arithmetic: the time left is the mean time
// per evaluation so far times the evaluations left.
func TestProgressETA(t *testing.T) {
	p := SweepProgress{Done: 25, Total: 100, Elapsed: 10 * time.Second}
	if p.ETA() != 30*time.Second || p.Fraction() != 0.25 {
		t.Errorf("ETA %v, fraction %v", p.ETA(), p.Fraction())
	}
	if (SweepProgress{Total: 5}).ETA() != 0 || (SweepProgress{Done: 5, Total: 5, Elapsed: time.Second}).ETA() != 0 {
		t.Error("ETA before the start or after the end is not 0")
	}
}
