package algorithms_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// BenchmarkParadox runs the paradox preset end to end (E000-1, docs/papers.md
// §1.9): draw M = 25 clients with d = 100 and n_i = 500, prepare the
// statistics, then race FedAvg s = 1, 5, 10 and FedProx with η = 0.1 for 150
// rounds, one goroutine per racer as experiment.Run does.
func BenchmarkParadox(b *testing.B) {
	const (
		eta    = 0.1
		rounds = 150
	)
	cfg := datasets.Linear{Clients: 25, Dim: 100, Samples: 500, Noise: 0.5}
	racers := []algorithms.Algorithm{
		algorithms.FedAvg{Eta: eta, LocalSteps: 1},
		algorithms.FedAvg{Eta: eta, LocalSteps: 5},
		algorithms.FedAvg{Eta: eta, LocalSteps: 10},
		algorithms.FedProx{Eta: eta},
	}
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		fed, err := cfg.Generate(i)
		if err != nil {
			b.Fatal(err)
		}
		p := model.NewProblem(fed)
		errs := make([]error, len(racers))
		var wg sync.WaitGroup
		for k, alg := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[k] = alg.Run(context.Background(), p, rounds, func(algorithms.LinearRound) {})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRoundMaps builds the round maps of the paradox racers (FedAvg
// s = 1, 5, 10 and FedProx) for a step size the problem has not seen, as a
// key press that changes η does, on the prepared E000-1 problem.
func BenchmarkRoundMaps(b *testing.B) {
	fed, err := datasets.Linear{Clients: 25, Dim: 100, Samples: 500, Noise: 0.5}.Generate(1)
	if err != nil {
		b.Fatal(err)
	}
	p := model.NewProblem(fed)
	p.Locals()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		eta := 0.1 * (1 + float64(i+1)*1e-6)
		specs := []algorithms.MapSpec{{Eta: eta, Steps: 1}, {Eta: eta, Steps: 5}, {Eta: eta, Steps: 10}, {Prox: true, Eta: eta}}
		if err := algorithms.PrepareMaps(context.Background(), p, specs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScale measures the four paradox racers on federations of M
// clients with d features and n samples each: ns/op and B/op are the setup
// (draw, statistics, round maps), rounds/s the rate of the four racers
// after it. The cases of more than 2·10⁹ multiply-adds (M·n·d·min(n, d)) run only with
// FEDSCOPE_BENCH_HUGE=1 (bench/scale.sh runs the whole table, one process
// per case, with peak memory).
func BenchmarkScale(b *testing.B) {
	for _, m := range []int{25, 250, 2500, 10000} {
		for _, d := range []int{10, 100, 400} {
			for _, n := range []int{50, 500} {
				cfg := datasets.Linear{Clients: m, Dim: d, Samples: n, Noise: 0.5}
				if cfg.Validate() != nil {
					continue // over datasets.MaxEntries
				}
				huge := float64(m)*float64(n)*float64(d)*float64(min(n, d)) > 2e9
				b.Run(fmt.Sprintf("M=%d/d=%d/n=%d", m, d, n), func(b *testing.B) {
					if huge && os.Getenv("FEDSCOPE_BENCH_HUGE") == "" {
						b.Skip("huge case: set FEDSCOPE_BENCH_HUGE=1")
					}
					benchScale(b, cfg)
				})
			}
		}
	}
}

func benchScale(b *testing.B, cfg datasets.Linear) {
	const rounds = 100
	r := math.Sqrt(float64(cfg.Dim) / float64(cfg.Samples))
	eta := 0.1 * min(1, 4/((1+r)*(1+r))) // below 2/λ_max ≈ 2/(1+√(d/n))²
	racers := []algorithms.Algorithm{
		algorithms.FedAvg{Eta: eta, LocalSteps: 1}, algorithms.FedAvg{Eta: eta, LocalSteps: 5},
		algorithms.FedAvg{Eta: eta, LocalSteps: 10}, algorithms.FedProx{Eta: eta},
	}
	specs := []algorithms.MapSpec{{Eta: eta, Steps: 1}, {Eta: eta, Steps: 5}, {Eta: eta, Steps: 10}, {Prox: true, Eta: eta}}
	var p *model.Problem
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		fed, err := cfg.Generate(i + 1)
		if err != nil {
			b.Fatal(err)
		}
		p = model.NewProblem(fed)
		if err := algorithms.PrepareMaps(context.Background(), p, specs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, alg := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := alg.Run(context.Background(), p, rounds, func(algorithms.LinearRound) {}); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(rounds/time.Since(start).Seconds(), "rounds/s")
}
