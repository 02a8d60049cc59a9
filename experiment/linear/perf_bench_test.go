package linear_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/linear"
	"github.com/fedscope/fedscope/experiment/registry"
	"github.com/fedscope/fedscope/internal/cputime"
)

func preset(tb testing.TB, name string) experiment.Scenario {
	tb.Helper()
	p, err := registry.Catalog().Lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	return p.Scenario()
}

func race(tb testing.TB, e *experiment.Engine, sc experiment.Scenario) {
	tb.Helper()
	res, err := e.Run(context.Background(), sc, experiment.Observer{})
	if err != nil {
		tb.Fatal(err)
	}
	if failed := res.Failed(); len(failed) > 0 {
		tb.Fatal(failed)
	}
}

// BenchmarkParadoxCold is a fresh `paradox` run (E000-1: M = 25, d = 100,
// n_i = 500, FedAvg s = 1, 5, 10 and FedProx, 150 rounds): draw the data,
// compute the statistics, build the round maps, race.
func BenchmarkParadoxCold(b *testing.B) {
	sc := preset(b, "paradox")
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		race(b, experiment.NewEngine(), sc)
	}
	reportCPU(b, cputime.Process()-cpu)
}

// reportCPU reports the CPU time per operation (user + system, all
// goroutines) as cpu-ms/op.
func reportCPU(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkKeyEta is a key press that changes η on `paradox` with the data
// already prepared, as in the explorer (the Engine keeps the problem): every
// round map is rebuilt for the new η, then the four racers run all 150
// rounds. Each iteration uses a step size the problem has not seen.
func BenchmarkKeyEta(b *testing.B) {
	sc := preset(b, "paradox")
	e := experiment.NewEngine()
	race(b, e, sc)
	b.ReportAllocs()
	cpu := cputime.Process()
	for i := 0; b.Loop(); i++ {
		experiment.Update(&sc, func(c *linear.Config) { c.Eta = 0.1 * (1 + float64(i+1)*1e-6) })
		race(b, e, sc)
	}
	reportCPU(b, cputime.Process()-cpu)
}

// BenchmarkKeySteps is the key that moves the local steps s of `paradox`'s
// third racer from 10 to 12 (the `+` key): only that racer's round map is
// new. Each iteration first runs, untimed, the state before the key press at
// a fresh η, so that the map of s = 12 is never already kept.
func BenchmarkKeySteps(b *testing.B) {
	sc := preset(b, "paradox")
	e := experiment.NewEngine()
	race(b, e, sc)
	b.ReportAllocs()
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		eta := 0.1 * (1 + float64(i+1)*1e-6)
		experiment.Update(&sc, func(c *linear.Config) { c.Eta, c.LocalSteps = eta, 10 })
		race(b, e, sc)
		experiment.Update(&sc, func(c *linear.Config) { c.LocalSteps = 12 })
		b.StartTimer()
		start := cputime.Process()
		race(b, e, sc)
		cpu += cputime.Process() - start
	}
	reportCPU(b, cpu)
}

// BenchmarkSweepTrial is one evaluation of `fedgain-covariate` (E000-4:
// M = 20, d = 100, 10 × 50 + 10 × 500 rows, four racers, closed-form
// limits) at r = 50, run on a warm worker as in a sweep. allocs/op and B/op
// are the allocation per trial.
func BenchmarkSweepTrial(b *testing.B) {
	sc := preset(b, "fedgain-covariate")
	fam := sc.Family.(experiment.Sweeper)
	p, err := sc.PointScenario(49, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := fam.Evaluate(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := cputime.Process()
	for i := uint64(0); b.Loop(); i++ {
		p.Seed = 1 + i%20
		if _, err := fam.Evaluate(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cputime.Process()-cpu)
}

// BenchmarkSweepFedGainCovariate is the whole `fedgain-covariate` sweep at
// the paper's scale: r = 1…100 × 20 trials × 4 racers (2000 evaluations).
// B/op is the allocation of the whole sweep.
func BenchmarkSweepFedGainCovariate(b *testing.B) {
	benchSweep(b, "fedgain-covariate")
}

// BenchmarkSweepFedGainModel is the whole `fedgain-model` sweep: 25 values
// of Γ × 20 trials × 4 racers × 200 rounds.
func BenchmarkSweepFedGainModel(b *testing.B) {
	benchSweep(b, "fedgain-model")
}

// BenchmarkSweepPolynomial is the whole `polynomial` sweep: 10 sizes × 500
// trials × 4 racers, closed-form limits.
func BenchmarkSweepPolynomial(b *testing.B) {
	benchSweep(b, "polynomial")
}

func benchSweep(b *testing.B, name string) {
	sc := preset(b, name)
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		if err := experiment.RunSweep(context.Background(), sc, func(experiment.TrialResult) {}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cputime.Process()-cpu)
}
