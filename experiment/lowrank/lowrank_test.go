package lowrank

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

func race(t *testing.T, sc experiment.Scenario) map[string][]experiment.Round {
	t.Helper()
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	data, err := Family.Prepare(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]experiment.Round{}
	for _, r := range Family.Racers(sc) {
		if err := r.Run(context.Background(), data, sc.Rounds, func(rd experiment.Round) { out[r.Label] = append(out[r.Label], rd) }); err != nil {
			t.Fatalf("%s: %v", r.Label, err)
		}
	}
	return out
}

// TestRacerIndependence: a racer's rounds — its Γ above all — do not depend
// on which other racers run (the server's samples are a knob, not the
// largest rank present).
func TestRacerIndependence(t *testing.T) {
	sc := lowRank()
	sc.Preset = "lowrank"
	alone := sc
	experiment.Update(&alone, func(c *Config) { c.Racers = c.Racers[:1] }) // FedLRGD r=3
	a, b := race(t, alone)["FedLRGD r=3"], race(t, sc)["FedLRGD r=3"]
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d epochs alone, %d with the others", len(a), len(b))
	}
	for k := range a {
		for m := range a[k].Values {
			if x, y := a[k].Values[m], b[k].Values[m]; x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				t.Fatalf("epoch %d, %s: %v alone, %v with the others", k+1, metrics[m].Name, x, y)
			}
		}
	}
	// Epoch 1 costs r² + (R − r)r gradients (the server's samples beyond the nodes).
	if got, want := a[0].Values[1], float64(3*3+(40-3)*3); got != want {
		t.Errorf("Γ after epoch 1 = %v, want r² + (R−r)r = %v", got, want)
	}
}

// TestValidate: ranks above the server's samples and bad cut-offs are
// input errors naming the value.
func TestValidate(t *testing.T) {
	sc := lowRank()
	sc.Preset = "lowrank"
	for _, kv := range [][2]string{{"server", "20"}, {"svd_tol", "1"}} {
		bad := sc
		if err := bad.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
		err := bad.Validate()
		if _, ok := err.(*experiment.InputError); !ok || !strings.Contains(err.Error(), kv[0]+"=") && !strings.Contains(err.Error(), "R=20") {
			t.Errorf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
}

// TestComplexityEvaluate checks one point of lowrank-complexity against
// the racers run directly: Γ is the oracle complexity of the first epoch
// whose suboptimality is at most ε, NaN (and reached 0) when none is.
func TestComplexityEvaluate(t *testing.T) {
	sc := lowRankComplexity()
	sc.Preset = "lowrank-complexity"
	p, err := sc.PointScenario(6, 0) // ε = 1e-5
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Family.Sweeps().Evaluate(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	eps := cfg(p).Epsilon
	data, _ := Family.Prepare(context.Background(), p, nil)
	fp := data.(*model.Federated)
	c := cfg(p)
	for i, r := range resolve(cfg(p)) {
		var alg algorithms.FederatedAlgorithm = algorithms.LocalSGD{Steps: r.steps, Phi: c.Phi, Seed: p.Seed}
		if r.spec.Kind == KindFedLRGD {
			alg = algorithms.FedLRGD{Rank: r.rank, Iters: c.Iters, Phi: c.Phi, Seed: p.Seed}
		}
		want := []float64{math.NaN(), 0, math.NaN()}
		_ = alg.Run(context.Background(), fp, p.Rounds, func(e algorithms.EpochRound) {
			if math.IsNaN(want[0]) && e.Subopt <= eps {
				want = []float64{e.Oracle, 1, float64(e.Index)}
			}
		})
		for k := range want {
			if got := rows[i][k]; got != want[k] && !(math.IsNaN(got) && math.IsNaN(want[k])) {
				t.Errorf("%s at ε=%g: %v, direct run %v", r.label, eps, rows[i], want)
				break
			}
		}
	}
	// The theory curves are the paper's formulas at every grid value.
	ms := Family.Sweeps().SweepMetrics(sc)
	th := ms[0].Theory
	if len(th) != 6 {
		t.Fatalf("%d theory curves, want 4 FedLRGD + 2 FedAvg bounds", len(th))
	}
	for i, e := range sc.Sweep.Grid {
		v := 100 * 100 * math.Pow(5/e, 0.75)
		if math.Abs(th[4].Curve[i]-0.75*v) > 1e-9*v || math.Abs(th[5].Curve[i]-8*v) > 1e-9*v {
			t.Errorf("ε=%g: FedAvg bounds %v, %v; want %v, %v", e, th[4].Curve[i], th[5].Curve[i], 0.75*v, 8*v)
		}
		s := math.Ceil(math.Log(math.Ln2/e) / math.Log(26.0/25))
		if want := 100.0 + 10*50 + 10*s + 100*100*10; th[1].Curve[i] != want {
			t.Errorf("ε=%g: FedLRGD r=10 curve %v, want %v", e, th[1].Curve[i], want)
		}
	}
}
