package bound

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"gonum.org/v1/gonum/floats"
)

var catalog = experiment.NewCatalog(Family)

// Positions of the metrics in a round's values.
var (
	suboptIdx     = experiment.MetricIndex(metrics, "subopt")
	avgIdx        = experiment.MetricIndex(metrics, "subopt_avg")
	boundIdx      = experiment.MetricIndex(metrics, "bound")
	driftIdx      = experiment.MetricIndex(metrics, "drift")
	driftBoundIdx = experiment.MetricIndex(metrics, "drift_bound")
)

// scenario is the fedavg-bound preset with assignments applied as `--set`
// applies them.
func scenario(t testing.TB, sets ...string) experiment.Scenario {
	t.Helper()
	sc, err := catalog.Scenario("fedavg-bound", sets...)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// run races a scenario on a fresh engine and returns the prepared data and
// every racer's rounds in order.
func run(t *testing.T, sc experiment.Scenario) (*Data, [][]experiment.Round) {
	t.Helper()
	var rounds [][]experiment.Round
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: func(p experiment.Point) {
		for len(rounds) <= p.Racer {
			rounds = append(rounds, nil)
		}
		rounds[p.Racer] = append(rounds[p.Racer], p.Round)
	}})
	if err != nil || len(res.Failed()) > 0 {
		t.Fatalf("%v %v", err, res.Failed())
	}
	// Rows start at round 0 with x⁽⁰⁾ = 0 and no running average yet
	// (issue 11); the tests below read rounds 1, 2, …
	for i, rs := range rounds {
		if len(rs) == 0 || rs[0].Index != 0 || floats.Norm(rs[0].Theta, 2) != 0 || !math.IsNaN(rs[0].Value(avgIdx)) {
			t.Fatalf("racer %d does not start with round 0 at x = 0", i)
		}
		rounds[i] = rs[1:]
	}
	return res.Data.(*Data), rounds
}

// TestPresetUnderBound runs the fedavg-bound preset (docs/papers.md §8, 002:
// M = 10 × 100 points, Dir(1) classes, τ = 5, η = 1/(4L), T = 100) and checks
// Thm 2.1 and the client-drift lemma (§3.2) on every round: the running
// average of F(x̄) − F* stays under the bound, and the drift under its bound.
// The preset runs in the theorem's regime, so no warning is raised.
func TestPresetUnderBound(t *testing.T) {
	sc := scenario(t)
	d, rounds := run(t, sc)
	if len(rounds) != 1 || len(rounds[0]) != 100 {
		t.Fatalf("%d racers, want 1 with 100 rounds", len(rounds))
	}
	for _, r := range rounds[0] {
		avg, bound := r.Value(avgIdx), r.Value(boundIdx)
		drift, driftBound := r.Value(driftIdx), r.Value(driftBoundIdx)
		if !(avg >= 0 && avg <= bound) {
			t.Errorf("round %d: running average %v not in [0, bound %v]", r.Index, avg, bound)
		}
		if !(drift >= 0 && drift <= driftBound) {
			t.Errorf("round %d: drift %v not in [0, drift bound %v]", r.Index, drift, driftBound)
		}
		if want := Bound(d, 1/(4*d.L), 5, r.Index, 10); !near(bound, want, 1e-12) {
			t.Errorf("round %d: bound %v, Bound(η = 1/(4L), τ = 5, t, M = 10) = %v", r.Index, bound, want)
		}
	}
	if w := Family.Facts(sc, d).Warnings; len(w) != 0 {
		t.Errorf("warnings in the theorem's regime: %q", w)
	}
}

// fedAvgByHand is Algorithm 1 of docs/papers.md §3.1 written out on the raw data:
// each round every client takes τ single-sample SGD steps from x⁽ᵗ⁾,
// drawing its sample indices from its own stream (seed, samplingStream+i),
// and x⁽ᵗ⁺¹⁾ is the uniform average. It returns per round x⁽ᵗ⁺¹⁾, F(x⁽ᵗ⁺¹⁾) −
// F*, the running mean of F(x̄^(s,k)) − F* over all τ·t local steps, and the
// largest drift (1/M)Σ‖x_i − x̄‖² over the round's steps.
func fedAvgByHand(r raw, fStar, eta float64, tau, rounds int, seed uint64) (xs [][]float64, subopt, avg, drift []float64) {
	m := len(r.x)
	rngs := make([]*rand.Rand, m)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(seed, samplingStream+uint64(i)))
	}
	x := make([]float64, dim)
	var sum float64
	steps := 0
	for t := 1; t <= rounds; t++ {
		local := make([][]float64, m)
		for i := range local {
			local[i] = append([]float64(nil), x...)
		}
		var dr float64
		xbar := make([]float64, dim)
		for k := 1; k <= tau; k++ {
			for i := range local {
				j := rngs[i].IntN(len(r.y[i]))
				floats.AddScaled(local[i], -eta, r.sampleGrad(i, j, local[i]))
			}
			clear(xbar)
			for i := range local {
				floats.AddScaled(xbar, 1/float64(m), local[i])
			}
			var s float64
			for i := range local {
				e := floats.Distance(local[i], xbar, 2)
				s += e * e / float64(m)
			}
			dr = math.Max(dr, s)
			sum += r.f(xbar) - fStar
			steps++
		}
		x = append([]float64(nil), xbar...)
		xs = append(xs, x)
		subopt = append(subopt, r.f(x)-fStar)
		avg = append(avg, sum/float64(steps))
		drift = append(drift, dr)
	}
	return xs, subopt, avg, drift
}

// TestRunningAverage checks that subopt_avg is Thm 2.1's left side, the mean
// of F(x̄^(t,k)) − F* over all τ·t local steps so far (docs/papers.md §3.2):
// against FedAvg recomputed by hand on the raw data with the same sampling,
// and, with τ = 1 (where the shadow iterate after the round's one step is
// the new global model), through the identity
// avg_t·t − avg_{t−1}·(t−1) = F(x⁽ᵗ⁾) − F*.
func TestRunningAverage(t *testing.T) {
	const rounds = 30
	sc := scenario(t, "clients=4", "samples=25", "dirichlet_c=0.5", "local_steps=5", "eta=0.02", "seed=3")
	sc.Rounds = rounds
	d, got := run(t, sc)
	r := rawOf(d)
	fStar := r.f(r.star(t))
	xs, subopt, avg, drift := fedAvgByHand(r, fStar, 0.02, 5, rounds, 3)
	for k, rd := range got[0] {
		if dist := floats.Distance(rd.Theta, xs[k], 2); dist > 1e-9*floats.Norm(xs[k], 2) {
			t.Errorf("round %d: x = %v, by hand %v", rd.Index, rd.Theta, xs[k])
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"subopt", rd.Value(suboptIdx), subopt[k]},
			{"subopt_avg", rd.Value(avgIdx), avg[k]},
			{"drift", rd.Value(driftIdx), drift[k]},
		} {
			if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want)+1e-12 {
				t.Errorf("round %d: %s = %v, by hand %v", rd.Index, c.name, c.got, c.want)
			}
		}
	}

	sc = scenario(t, "local_steps=1", "seed=5")
	_, one := run(t, sc)
	prev := 0.0
	for _, rd := range one[0] {
		n := float64(rd.Index)
		step := rd.Value(avgIdx)*n - prev*(n-1)
		if want := rd.Value(suboptIdx); math.Abs(step-want) > 1e-9*math.Max(math.Abs(want), 1e-3) {
			t.Errorf("τ = 1, round %d: avg_t·t − avg_{t−1}·(t−1) = %v, F(x_t) − F* = %v", rd.Index, step, want)
		}
		prev = rd.Value(avgIdx)
	}
}

// TestOneClientIsSGD: with M = 1 there is nothing to average, so T rounds of
// τ local steps are τ·T steps of plain single-sample SGD (docs/papers.md §3.1):
// the global model after round t is SGD's iterate after τ·t steps, the same
// as the τ = 1 run's after round τ·t, and the drift is 0.
func TestOneClientIsSGD(t *testing.T) {
	const tau, rounds, eta = 5, 12, 0.03
	sc := scenario(t, "clients=1", "samples=40", "local_steps=5", "eta=0.03", "seed=9")
	sc.Rounds = rounds
	d, got := run(t, sc)
	r := rawOf(d)
	// Plain SGD on the one client, sampling from its stream.
	rng := rand.New(rand.NewPCG(9, samplingStream))
	x := make([]float64, dim)
	var sgd [][]float64
	for step := 1; step <= tau*rounds; step++ {
		floats.AddScaled(x, -eta, r.sampleGrad(0, rng.IntN(len(r.y[0])), x))
		sgd = append(sgd, append([]float64(nil), x...))
	}
	sc1 := scenario(t, "clients=1", "samples=40", "local_steps=1", "eta=0.03", "seed=9")
	sc1.Rounds = tau * rounds
	_, single := run(t, sc1)
	for k, rd := range got[0] {
		want := sgd[tau*(k+1)-1]
		if dist := floats.Distance(rd.Theta, want, 2); dist > 1e-12*floats.Norm(want, 2) {
			t.Errorf("round %d: x = %v, SGD after %d steps %v", rd.Index, rd.Theta, tau*(k+1), want)
		}
		if s := single[0][tau*(k+1)-1].Theta; floats.Distance(rd.Theta, s, 2) != 0 {
			t.Errorf("round %d: x = %v, τ = 1 run after round %d: %v", rd.Index, rd.Theta, tau*(k+1), s)
		}
		if dr := rd.Value(driftIdx); dr != 0 {
			t.Errorf("round %d: drift %v with one client", rd.Index, dr)
		}
	}
}

// TestBoundSameSeedSameBytes: same seed → byte-identical output whatever the
// number of CPUs (docs/design.md), data prepared afresh; another seed changes it.
func TestBoundSameSeedSameBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	output := func(sc experiment.Scenario) string {
		table := experiment.NewTable(sc)
		if _, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add}); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := table.Write(&b, experiment.CSV); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	sc := scenario(t, "algorithms=fedavg,fedavg:tau=1,fedavg:eta=0.01", "seed=4")
	var outs []string
	for _, procs := range []int{1, 2, 1} {
		runtime.GOMAXPROCS(procs)
		outs = append(outs, output(sc))
	}
	for i, out := range outs[1:] {
		if out != outs[0] {
			t.Errorf("run %d differs from run 0 with the same seed", i+1)
		}
	}
	if other := output(scenario(t, "algorithms=fedavg,fedavg:tau=1,fedavg:eta=0.01", "seed=5")); other == outs[0] {
		t.Error("seeds 4 and 5 give the same output")
	}
}
