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
		startProfile(*profile)
		defer pprof.StopCPUProfile()
	}
	cfg := datasets.Linear{Clients: *clients, Dim: *dim, Samples: *samples, Noise: 0.5}
	// λ_max(X_iᵀX_i/n) ≈ (1 + √(d/n))² for Gaussian rows: keep η below the
	// stable limit 2/λ_max of the local steps.
	step := *eta * min(1, 4/((1+math.Sqrt(float64(*dim)/float64(*samples)))*(1+math.Sqrt(float64(*dim)/float64(*samples)))))
	specs := []algorithms.MapSpec{{Eta: step, Steps: 1}, {Eta: step, Steps: 5}, {Eta: step, Steps: 10}, {Prox: true, Eta: step}}

	var (
		fed *datasets.Federation
		p   *model.Problem
		err error
	)
	gen := timed(func() { fed, err = cfg.Generate(1) })
	if err != nil {
		fail(2, err)
	}
	stats := timed(func() { p = model.NewProblem(fed) })
	maps := timed(func() { err = algorithms.PrepareMaps(context.Background(), p, specs) })
	if err != nil {
		fail(1, err)
	}
	racers := []algorithms.Algorithm{
		algorithms.FedAvg{Eta: step, LocalSteps: 1}, algorithms.FedAvg{Eta: step, LocalSteps: 5},
		algorithms.FedAvg{Eta: step, LocalSteps: 10}, algorithms.FedProx{Eta: step},
	}
	race := timed(func() { err = runRacers(p, racers, *rounds) })
	if err != nil {
		fail(1, err)
	}
	fmt.Printf("M=%d d=%d n=%d  generate %s (cpu %s)  statistics %s (cpu %s)  maps %s (cpu %s)  setup %s  %d rounds × 4 racers %s → %.0f rounds/s (cpu %s)  peak RSS %d MB\n",
		*clients, *dim, *samples, ms(gen.wall), ms(gen.cpu), ms(stats.wall), ms(stats.cpu), ms(maps.wall), ms(maps.cpu), ms(gen.wall+stats.wall+maps.wall),
		*rounds, ms(race.wall), float64(*rounds)/race.wall.Seconds(), ms(race.cpu), peakRSS()>>20)
}

// startProfile starts the CPU profile into the file at path.
func startProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fail(1, err)
	}
	pprof.StartCPUProfile(f)
}

// fail prints err and exits with code.
func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(code)
}

// phase is the wall-clock and CPU time of one phase of the case.
type phase struct{ wall, cpu time.Duration }

// timed runs f and returns its wall-clock and CPU time.
func timed(f func()) phase {
	t, c := time.Now(), cpu()
	f()
	return phase{time.Since(t), cpu() - c}
}

// runRacers runs the racers side by side for rounds rounds each and
// returns the first racer's error, in racer order.
func runRacers(p *model.Problem, racers []algorithms.Algorithm, rounds int) error {
	var wg sync.WaitGroup
	errs := make([]error, len(racers))
	for i, alg := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = alg.Run(context.Background(), p, rounds, func(algorithms.LinearRound) {})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }
