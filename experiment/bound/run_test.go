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

// Position of the suboptimality in a round's values (the others are the
// package's).
var suboptIdx = experiment.MetricIndex(metrics, "subopt")

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
	if len(rounds) != 2 || len(rounds[0]) != 100 || len(rounds[1]) != 100 {
		t.Fatalf("%d racers, want 2 with 100 rounds", len(rounds))
	}
	for racer, full := range []bool{false, true} {
		for _, r := range rounds[racer] {
			avg, bound := r.Value(avgIdx), r.Value(boundIdx)
			drift, driftBound := r.Value(driftIdx), r.Value(driftBoundIdx)
			if !(avg >= 0 && avg <= bound) {
				t.Errorf("round %d: running average %v not in [0, bound %v]", r.Index, avg, bound)
			}
			if !(drift >= 0 && drift <= driftBound) {
				t.Errorf("round %d: drift %v not in [0, drift bound %v]", r.Index, drift, driftBound)
			}
			if want := Bound(d, 1/(4*d.L), 5, r.Index, 10, full); !near(bound, want, 1e-12) {
				t.Errorf("round %d: bound %v, Bound(η = 1/(4L), τ = 5, t, M = 10) = %v", r.Index, bound, want)
			}
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
func fedAvgByHand(r raw, fStar, eta float64, tau, rounds int, seed uint64, full bool) (xs [][]float64, subopt, avg, drift []float64, iters []iterate) {
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
			iters = append(iters, iterate{i, local[i]})
		}
		var dr float64
		xbar := make([]float64, dim)
		for k := 1; k <= tau; k++ {
			for i := range local {
				var g []float64
				if full {
					g = r.grad(i, local[i])
				} else {
					g = r.sampleGrad(i, rngs[i].IntN(len(r.y[i])), local[i])
				}
				local[i] = append([]float64(nil), local[i]...)
				floats.AddScaled(local[i], -eta, g)
				iters = append(iters, iterate{i, local[i]})
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
	return xs, subopt, avg, drift, iters
}

// iterate is a client's local iterate.
type iterate struct {
	client int
	x      []float64
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
	for racer, full := range []bool{false, true} {
		xs, subopt, avg, drift, _ := fedAvgByHand(r, fStar, 0.02, 5, rounds, 3, full)
		for k, rd := range got[racer] {
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
					t.Errorf("full %v, round %d: %s = %v, by hand %v", full, rd.Index, c.name, c.got, c.want)
				}
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

// TestFullGradientDrift: with local full-gradient steps (`fedavg:batch=full`)
// there is no sampling noise, so the client drift is the heterogeneity's
// alone (docs/papers.md §8, 002): exactly 0 when every client holds the same
// data (∇F_i = ∇F everywhere), and rising as the class skew Dir(c) grows
// (c = 100 ≈ IID, 1, 0.1), in the mean over rounds and seeds 1–5 — while the
// single-sample racer's drift, mostly sampling noise, moves far less.
func TestFullGradientDrift(t *testing.T) {
	d := generate(6, 30, 0.1, 4)
	for i := range d.Clients {
		d.Clients[i] = d.Clients[0]
	}
	d.solve()
	tr, err := fedAvg(context.Background(), d, Setting{Eta: 0.02, Tau: 5, Full: true}, 20, 4)
	if err != nil || tr.Err != nil {
		t.Fatal(err, tr.Err)
	}
	for _, r := range tr.Rounds {
		if r.drift > 1e-24 {
			t.Fatalf("identical clients, round %d: full-gradient drift %v, want 0", r.index, r.drift)
		}
	}

	meanDrift := func(c float64) (full, single float64) {
		for seed := 1; seed <= 5; seed++ {
			sc := scenario(t, "dirichlet_c="+experiment.FormatFloat(c), "seed="+experiment.FormatFloat(float64(seed)))
			_, rounds := run(t, sc)
			for racer, dst := range []*float64{&single, &full} {
				for _, r := range rounds[racer] {
					*dst += r.Value(driftIdx) / float64(5*len(rounds[racer]))
				}
			}
		}
		return full, single
	}
	var prevFull, prevSingle float64
	for k, c := range []float64{100, 1, 0.1} {
		full, single := meanDrift(c)
		t.Logf("Dir(%v): mean drift full %.4g, single-sample %.4g", c, full, single)
		if k > 0 && !(full > 1.3*prevFull) {
			t.Errorf("Dir(%v): full-gradient drift %v does not rise over %v at the less skewed c", c, full, prevFull)
		}
		if k > 0 && math.Abs(single-prevSingle) > 0.5*prevSingle {
			t.Errorf("Dir(%v): single-sample drift %v moved by more than half from %v", c, single, prevSingle)
		}
		prevFull, prevSingle = full, single
	}
}
