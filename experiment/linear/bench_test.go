package linear

import (
	"context"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// BenchmarkSweepFirstCoarseCurve measures the time from the start of the
// paper-scale fedgain-covariate sweep until the first trial has covered the
// grid at stride 16 (r = 1, 17, 33, …, 100: 8 points, a coarse curve for
// every racer and both clients), as the sweep view first draws it. Target:
// under 3 s.
func BenchmarkSweepFirstCoarseCurve(b *testing.B) {
	sc := preset(b, "fedgain-covariate")
	coarse := map[int]bool{}
	for i := range sc.Sweep.Grid {
		if i%16 == 0 || i == len(sc.Sweep.Grid)-1 {
			coarse[i] = true
		}
	}
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		left := len(coarse)
		err := experiment.RunSweep(ctx, sc, func(r experiment.TrialResult) {
			if r.Trial == 0 && coarse[r.Point] {
				if left--; left == 0 {
					cancel()
				}
			}
		})
		cancel()
		if left != 0 || err == nil {
			b.Fatalf("coarse curve incomplete (%d left), err %v", left, err)
		}
	}
}
