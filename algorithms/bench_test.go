package algorithms_test

import (
	"context"
	"sync"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// BenchmarkParadox runs the paradox preset end to end (E000-1, PAPERS.md
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
