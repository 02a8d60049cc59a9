package linear

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
)

// race runs a scenario and returns its table.
func race(t *testing.T, sc experiment.Scenario) (*experiment.Table, experiment.Facts) {
	t.Helper()
	table := experiment.NewTable(sc)
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add})
	if err != nil {
		t.Fatal(err)
	}
	if failed := res.Failed(); len(failed) > 0 {
		t.Fatal(failed)
	}
	return table, res.Facts
}

// TestRoundZero checks that every racer's rows start at round 0, θ_0 = 0
// (docs/papers.md §8): the estimation error is ‖θ*‖ and the gradient norm
// ‖(2/N) Σ_i X_iᵀy_i‖ of ℓ = (1/N)Σ‖y_i − X_iθ‖² at 0, both computed here
// from the generated data; rounds 1…T follow.
func TestRoundZero(t *testing.T) {
	sc := preset(t, "paradox")
	sc.Rounds = 3
	set(t, &sc, "clients", "4", "dim", "5", "samples", "20")
	table, _ := race(t, sc)
	fed, err := cfg(sc).Data.Generate(sc.Seed)
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, fed.Dim)
	for _, c := range fed.Clients {
		for j := 0; j < c.N; j++ {
			floats.AddScaled(grad, -2*c.Y[j]/float64(fed.N()), c.X[j*fed.Dim:(j+1)*fed.Dim])
		}
	}
	for r, rs := range table.Rounds {
		if len(rs) != 4 || rs[0].Index != 0 || rs[3].Index != 3 {
			t.Fatalf("racer %d: %d rows from round %d", r, len(rs), rs[0].Index)
		}
		if got, want := rs[0].Value(1), floats.Norm(fed.Truth, 2); math.Abs(got-want) > 1e-12*want {
			t.Errorf("racer %d round 0: est_error %v, want ‖θ*‖ = %v", r, got, want)
		}
		if got, want := rs[0].Value(0), floats.Norm(grad, 2); math.Abs(got-want) > 1e-12*want {
			t.Errorf("racer %d round 0: grad_norm %v, want ‖(2/N)Xᵀy‖ = %v", r, got, want)
		}
	}
	// The column's caption (in the JSON-lines header and on the chart) says
	// which loss grad_norm differentiates (docs/papers.md §1.2, §7).
	if i := experiment.MetricIndex(metrics, "grad_norm"); i < 0 || !strings.Contains(metrics[i].Caption, "ℓ = (1/N)Σ‖y − Xθ‖²") {
		t.Errorf("the grad_norm caption does not say which loss it differentiates")
	}
}

// TestRoundsToReach checks the rounds to converge on curves worked out by
// hand: the first round from which the curve stays within 5 % of its last
// value.
func TestRoundsToReach(t *testing.T) {
	for i, test := range []struct {
		errs []float64
		want int
	}{
		{[]float64{10, 5, 2, 1.2, 1.04, 1.01, 1}, 4},
		{[]float64{10, 1.0, 1.2, 1.04, 1}, 3},  // within at round 1, out again at 2
		{[]float64{10, 0.9, 0.96, 1.02, 1}, 2}, // from below: 0.9 is 10 % off
		{[]float64{1, 1, 1}, 0},
		{[]float64{3}, 0},
		{[]float64{1, 0}, -1},
		{[]float64{1, math.NaN()}, -1},
		{nil, -1},
	} {
		rounds := make([]int, len(test.errs))
		for k := range rounds {
			rounds[k] = k
		}
		if got := RoundsToReach(rounds, test.errs, 0.05); got != test.want {
			t.Errorf("case %d: RoundsToReach(%v) = %d, want %d", i, test.errs, got, test.want)
		}
	}
}

// TestSummarize checks the communication saving on a table made by hand:
// FedAvg s=1 settles at round 6, s=5 at round 2, FedProx at round 8, so the
// savings are 3 and 0.75; a racer that stopped early has no numbers.
func TestSummarize(t *testing.T) {
	sc := preset(t, "paradox")
	sc.Rounds = 8
	set(t, &sc, "algorithms", "fedavg:s=1,fedavg:s=5,fedprox,fedavg:s=20")
	m := experiment.MetricIndex(metrics, "est_error")
	curve := func(errs ...float64) []experiment.Round {
		out := make([]experiment.Round, len(errs))
		for k, e := range errs {
			vals := make([]float64, len(metrics))
			vals[m] = e
			out[k] = experiment.Round{Index: k, Values: vals}
		}
		return out
	}
	table := experiment.NewTable(sc)
	table.Rounds = [][]experiment.Round{
		curve(10, 8, 6, 4, 3, 2, 1.04, 1.01, 1),
		curve(10, 3, 1.04, 1, 1, 1, 1, 1, 1),
		curve(10, 9, 8, 7, 6, 5, 4, 3, 1.04),
		curve(10, 2, 1),
	}
	sums := Family.Summarize(sc, table)
	if len(sums) != 4 {
		t.Fatalf("%d summaries", len(sums))
	}
	value := func(s experiment.RacerSummary, name string) float64 {
		for _, v := range s.Values {
			if v.Name == name {
				return v.Value
			}
		}
		return math.NaN()
	}
	for i, want := range []struct{ rounds, saving float64 }{{6, 1}, {2, 3}, {8, 0.75}} {
		s := sums[i]
		if value(s, "rounds_to_5pct") != want.rounds || math.Abs(value(s, "saving_vs_fedavg_s1")-want.saving) > 1e-15 {
			t.Errorf("%s: %+v, want rounds %v and saving %v", s.Label, s.Values, want.rounds, want.saving)
		}
	}
	if !strings.Contains(sums[1].Text, "3.00× fewer rounds than FedAvg s=1 (6)") {
		t.Errorf("s=5 text %q", sums[1].Text)
	}
	if !strings.Contains(sums[2].Text, "1.33× more rounds") {
		t.Errorf("FedProx text %q", sums[2].Text)
	}
	if len(sums[3].Values) != 0 || !strings.Contains(sums[3].Text, "stopped before round 8") {
		t.Errorf("stopped racer: %+v", sums[3])
	}
	b, _ := sums[1].MarshalJSON()
	if want := `{"record":"summary","algorithm":"FedAvg s=5","rounds_to_5pct":2,"final_est_error":1,"saving_vs_fedavg_s1":3,"text":`; !strings.HasPrefix(string(b), want) {
		t.Errorf("JSON %s, want prefix %s", b, want)
	}
}

// TestBatchNormKnob checks the batch_norm key: local (1/n_i) by default,
// batch (1/B) on request, anything else refused naming both.
func TestBatchNormKnob(t *testing.T) {
	sc := preset(t, "minibatch")
	if got := sc.Get("batch_norm"); got != "local" || cfg(sc).BatchNorm != model.NormLocal {
		t.Errorf("default batch_norm %q", got)
	}
	set(t, &sc, "batch_norm", "batch")
	if cfg(sc).BatchNorm != model.NormBatch || !strings.Contains(summary(cfg(sc), math.NaN()), "1/B") {
		t.Errorf("batch_norm=batch: %v, summary %q", cfg(sc).BatchNorm, summary(cfg(sc), math.NaN()))
	}
	err := sc.Set("batch_norm", "mean")
	if err == nil || !strings.Contains(err.Error(), "local") || !strings.Contains(err.Error(), "batch") {
		t.Errorf("batch_norm=mean: %v", err)
	}
}
