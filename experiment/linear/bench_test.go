package linear

import (
	"context"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// benchSweep runs a sweep preset at the paper's scale with the preset's
// trials. Run these with -benchtime=1x: one iteration is a whole sweep.
func benchSweep(b *testing.B, name string) {
	sc := preset(b, name)
	b.ReportAllocs()
	for b.Loop() {
		table, err := experiment.NewSweepTable(sc)
		if err != nil {
			b.Fatal(err)
		}
		if err := experiment.RunSweep(context.Background(), sc, table.Add); err != nil {
			b.Fatal(err)
		}
		if table.Done() != table.Total() {
			b.Fatalf("%d of %d evaluations", table.Done(), table.Total())
		}
	}
}

// BenchmarkSweepFedGainCovariate is E000-4 at the paper's scale: 100 values
// of r × 20 trials × 4 racers (closed-form limits), M = 20, d = 100,
// N = 5500. Target: under 60 s on 2 cores.
func BenchmarkSweepFedGainCovariate(b *testing.B) { benchSweep(b, "fedgain-covariate") }

// BenchmarkSweepFedGainModel is E000-3: 25 values of Γ × 20 trials × 4
// racers, federated error = minimum over 200 rounds.
func BenchmarkSweepFedGainModel(b *testing.B) { benchSweep(b, "fedgain-model") }

// BenchmarkSweepPolynomial is E000-5: 10 values of n_i × 500 trials × 4
// racers. Target: under 10 s.
func BenchmarkSweepPolynomial(b *testing.B) { benchSweep(b, "polynomial") }

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
