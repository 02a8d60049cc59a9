package newton

import (
	"context"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// BenchmarkNewtonRounds runs the newton-rounds preset end to end (data
// generation, features, factorisations, 5 racers × 20 rounds), with the
// cache emptied each time. Target: under 1 s.
func BenchmarkNewtonRounds(b *testing.B) {
	sc := preset(b, "newton-rounds")
	eng := experiment.NewEngine()
	for i := 0; i < b.N; i++ {
		eng.Forget()
		if _, err := eng.Run(context.Background(), sc, experiment.Observer{Round: func(experiment.Point) {}}); err != nil {
			b.Fatal(err)
		}
	}
}

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
