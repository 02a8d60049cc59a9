package bound

import (
	"context"
	"math"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// TestRoundZero checks the row of x⁽⁰⁾ = 0 that starts every racer: with
// labels ±1, F_i(0) = (1/n_i) Σ y² = 1, so the suboptimality is 1 − F*; the
// running average, its bound and the drift are not measured before the
// first local step (empty), the drift bound is the same constant as later.
func TestRoundZero(t *testing.T) {
	sc := Family.Presets()[0].Scenario()
	sc.Rounds = 2
	table := experiment.NewTable(sc)
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Data.(*Data)
	for r, rs := range table.Rounds {
		if len(rs) != 3 || rs[0].Index != 0 || rs[1].Index != 1 {
			t.Fatalf("racer %d: %d rows from round %d", r, len(rs), rs[0].Index)
		}
		z := rs[0]
		if got, want := z.Value(0), 1-d.FStar; math.Abs(got-want) > 1e-12 {
			t.Errorf("racer %d round 0: subopt %v, want 1 − F* = %v", r, got, want)
		}
		for _, m := range []int{1, 2, 3} {
			if !math.IsNaN(z.Value(m)) {
				t.Errorf("racer %d round 0: %s = %v, want not measured", r, metrics[m].Name, z.Value(m))
			}
		}
		if z.Value(4) != rs[1].Value(4) {
			t.Errorf("racer %d: drift bound %v at round 0, %v at round 1", r, z.Value(4), rs[1].Value(4))
		}
	}
}
