package lowrank

import (
	"context"
	"fmt"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

// BenchmarkComplexityTrial is one trial of lowrank-complexity at m clients:
// every ε of the grid read from one lean run of the five racers (what a
// sweep worker now does per trial), against the racers run as the sweep
// ran them before, one full (not lean) run per ε until it first touched ε
// ("per-ε"; the ε where no racer touches run all 300 epochs).
func BenchmarkComplexityTrial(b *testing.B) {
	for _, m := range []int{100, 400} {
		sc, err := experiment.NewCatalog(Family).Scenario("lowrank-complexity", fmt.Sprintf("clients=%d", m))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("m=%d/lean-once", m), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				trialRuns = newRunCache(64) // cold: no run kept from the last iteration
				for point := range sc.Sweep.Grid {
					p, err := sc.PointScenario(point, 0)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := (sweeps{}).Evaluate(context.Background(), p, cfg(p)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("m=%d/per-ε", m), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for point := range sc.Sweep.Grid {
					p, _ := sc.PointScenario(point, 0)
					c := cfg(p)
					data, err := compute{}.Prepare(context.Background(), p, c, nil)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range resolve(c) {
						var alg algorithms.FederatedAlgorithm = algorithms.LocalSGD{Steps: r.steps, Phi: c.Phi, Seed: p.Seed}
						if r.spec.Kind == KindFedLRGD {
							alg = algorithms.FedLRGD{Rank: r.rank, Iters: c.Iters, Phi: c.Phi, Seed: p.Seed, Tol: c.SVDTol}
						}
						ctx, cancel := context.WithCancel(context.Background())
						_ = alg.Run(ctx, data, p.Rounds, func(e algorithms.EpochRound) {
							if e.Subopt <= c.Epsilon {
								cancel()
							}
						})
						cancel()
					}
				}
			}
		})
	}
}
