package newton

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/internal/cputime"
)

// pendigitsTuned is the scenario of `--set data=pendigits.scale --set
// test=pendigits.scale.t --set tune=true`, or a skip.
func pendigitsTuned(b *testing.B) experiment.Scenario {
	const dir = "../../../shared/data/"
	if _, err := os.Stat(dir + "pendigits.scale"); err != nil {
		b.Skip("pendigits not found in ../shared/data (see its README): ", err)
	}
	sc := dataScenario(1)
	sc.Preset = "data"
	for _, kv := range [][2]string{{"data", dir + "pendigits.scale"}, {"test", dir + "pendigits.scale.t"}, {"tune", "true"}} {
		if err := sc.Set(kv[0], kv[1]); err != nil {
			b.Fatal(err)
		}
	}
	return sc
}

// BenchmarkPendigitsTunedRun is the whole `fedscope run` of pendigits with
// tune=true in process: the tuning (BenchmarkTunePendigits), then the
// racers for 20 rounds and the facts.
func BenchmarkPendigitsTunedRun(b *testing.B) {
	sc := pendigitsTuned(b)
	b.ReportAllocs()
	cpu := cputime.Process()
	defer func() { reportCPU(b, cputime.Process()-cpu) }()
	for b.Loop() {
		runAll(b, sc)
	}
}

// runAll prepares the data of sc and runs its racers and facts.
func runAll(b *testing.B, sc experiment.Scenario) {
	data, err := Family.Prepare(context.Background(), sc, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range Family.Racers(sc) {
		if err := r.Run(context.Background(), data, sc.Rounds, func(experiment.Round) {}); err != nil {
			b.Fatal(err)
		}
	}
	_ = Family.Facts(sc, data)
}

// BenchmarkTunePendigits is `--set tune=true` on pendigits (7494 × 16
// training rows, 3498 test rows, 2000 random features, 10 IID clients):
// the grid of 6 σ² × 7 λ, the Υ checks and the final problem.
func BenchmarkTunePendigits(b *testing.B) {
	sc := pendigitsTuned(b)
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		if _, err := Family.Prepare(context.Background(), sc, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cputime.Process()-cpu)
}

// BenchmarkNewtonRounds is the newton-rounds preset end to end: data,
// random features and factorisations, then the five racers for 20 rounds.
func BenchmarkNewtonRounds(b *testing.B) {
	sc := newtonRounds()
	b.ReportAllocs()
	cpu := cputime.Process()
	defer func() { reportCPU(b, cputime.Process()-cpu) }()
	for b.Loop() {
		runAll(b, sc)
	}
}

// benchSweep evaluates every grid value of a sweep preset once (one trial),
// serially: the work of `fedscope sweep --trials 1` without the workers.
func benchSweep(b *testing.B, sc experiment.Scenario) {
	b.ReportAllocs()
	cpu := cputime.Process()
	defer func() { reportCPU(b, cputime.Process()-cpu) }()
	for b.Loop() {
		for i := range sc.Sweep.Grid {
			p, err := sc.PointScenario(i, 0)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Family.Sweeps().Evaluate(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkNewtonLocalSize is one trial of newton-local-size (9 values).
func BenchmarkNewtonLocalSize(b *testing.B) { benchSweep(b, newtonLocalSize()) }

// BenchmarkNewtonHeterogeneity is one trial of newton-heterogeneity (8 values).
func BenchmarkNewtonHeterogeneity(b *testing.B) { benchSweep(b, newtonHeterogeneity()) }

// reportCPU reports the CPU time per operation (user + system, all
// goroutines) as cpu-ms/op.
func reportCPU(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	}
}
