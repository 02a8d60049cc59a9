package experiment

import (
	"context"
	"testing"
)

// benchSweep runs a sweep preset at the paper's scale; trials 0 keeps the
// preset's. Run these with -benchtime=1x: one iteration is a whole sweep.
func benchSweep(b *testing.B, preset string) {
	p, err := LookupPreset(preset)
	if err != nil {
		b.Fatal(err)
	}
	sc := p.Scenario()
	b.ReportAllocs()
	for b.Loop() {
		table, _ := NewSweepTable(sc)
		if err := RunSweep(context.Background(), sc, table.Add); err != nil {
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
// grid at stride 16 (r = 1, 17, 33, …, 100: 9 points, a coarse curve for
// every racer and both clients), as the sweep view first draws it. Target:
// under 3 s.
func BenchmarkSweepFirstCoarseCurve(b *testing.B) {
	p, _ := LookupPreset("fedgain-covariate")
	sc := p.Scenario()
	coarse := map[int]bool{}
	for _, i := range coarseToFine(len(sc.Sweep.Grid)) {
		if i%16 == 0 || i == len(sc.Sweep.Grid)-1 {
			coarse[i] = true
		}
	}
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		left := len(coarse)
		err := RunSweep(ctx, sc, func(r TrialResult) {
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

// BenchmarkSweepNewtonLocalSize is E003-2 at the paper's scale: 9 values of
// m (|D| = 10000, |D_j| = 2000 … 80) × 10 trials × 8 curves (KRR, DKRR,
// FedNewton t = 1, 2, 4, 8 from one run, FedAvg and FedProx after 8
// rounds), M = 200 random features. Target: under 60 s on 2 cores.
func BenchmarkSweepNewtonLocalSize(b *testing.B) { benchSweep(b, "newton-local-size") }

// BenchmarkSweepNewtonHeterogeneity is E003-3 (the α sweep, the preset's
// default) at the paper's scale: 8 values of α × 10 trials, m = 20 clients
// with |D_j| = 500, plus the empirical Δ_Dj and Δ_fj of every trial; the β
// sweep (E003-4) costs the same. Target: under 60 s on 2 cores.
func BenchmarkSweepNewtonHeterogeneity(b *testing.B) { benchSweep(b, "newton-heterogeneity") }
