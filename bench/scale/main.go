// Command scale measures how fedscope's linear family scales with the
// number of clients M, the dimension d and the samples per client n: the
// setup (draw the federation, the clients' statistics, the round maps of the
// four paradox racers) and the rounds per second after it, with the peak
// resident memory of the process. One case per process, so that the peak
// memory is the case's own:
//
//	go run ./bench/scale -clients 10000 -dim 100 -samples 50
//
// bench/scale.sh runs the table of bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

func main() {
	clients := flag.Int("clients", 25, "clients M")
	dim := flag.Int("dim", 100, "dimension d")
	samples := flag.Int("samples", 500, "samples per client n_i")
	rounds := flag.Int("rounds", 100, "rounds per racer after the setup")
	eta := flag.Float64("eta", 0.1, "step size η (scaled by 100/d so that ηλ stays below 1)")
	profile := flag.String("cpuprofile", "", "write a CPU profile to `file`")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	cfg := datasets.Linear{Clients: *clients, Dim: *dim, Samples: *samples, Noise: 0.5}
	// λ_max(X_iᵀX_i/n) ≈ (1 + √(d/n))² for Gaussian rows: keep η below the
	// stable limit 2/λ_max of the local steps.
	step := *eta * min(1, 4/((1+math.Sqrt(float64(*dim)/float64(*samples)))*(1+math.Sqrt(float64(*dim)/float64(*samples)))))
	specs := []algorithms.MapSpec{{Eta: step, Steps: 1}, {Eta: step, Steps: 5}, {Eta: step, Steps: 10}, {Prox: true, Eta: step}}

	t0, c0 := time.Now(), cpu()
	fed, err := cfg.Generate(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tGen, cGen := time.Since(t0), cpu()-c0
	t1, c1 := time.Now(), cpu()
	p := model.NewProblem(fed)
	tStats, cStats := time.Since(t1), cpu()-c1
	t2, c2 := time.Now(), cpu()
	if err := algorithms.PrepareMaps(context.Background(), p, specs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tMaps, cMaps := time.Since(t2), cpu()-c2

	racers := []algorithms.Algorithm{
		algorithms.FedAvg{Eta: step, LocalSteps: 1}, algorithms.FedAvg{Eta: step, LocalSteps: 5},
		algorithms.FedAvg{Eta: step, LocalSteps: 10}, algorithms.FedProx{Eta: step},
	}
	t3, c3 := time.Now(), cpu()
	var wg sync.WaitGroup
	errs := make([]error, len(racers))
	for i, alg := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = alg.Run(context.Background(), p, *rounds, func(algorithms.LinearRound) {})
		}()
	}
	wg.Wait()
	tRounds, cRounds := time.Since(t3), cpu()-c3
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Printf("M=%d d=%d n=%d  generate %s (cpu %s)  statistics %s (cpu %s)  maps %s (cpu %s)  setup %s  %d rounds × 4 racers %s → %.0f rounds/s (cpu %s)  peak RSS %d MB\n",
		*clients, *dim, *samples, ms(tGen), ms(cGen), ms(tStats), ms(cStats), ms(tMaps), ms(cMaps), ms(tGen+tStats+tMaps),
		*rounds, ms(tRounds), float64(*rounds)/tRounds.Seconds(), ms(cRounds), peakRSS()>>20)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }
