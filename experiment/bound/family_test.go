package bound

import (
	"context"
	"fmt"
	"math"
	"strings"
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

// TestSummaryTerms: the end-of-run summary's four terms add up to the bound
// drawn at the last round (a sum the rows do not contain), the full-gradient
// racer has no variance terms, the ratio is the bound over the measured
// running average, and the help and the facts report each constant beside
// the largest value measured at the visited iterates.
func TestSummaryTerms(t *testing.T) {
	sc := Family.Presets()[0].Scenario()
	table := experiment.NewTable(sc)
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add})
	if err != nil {
		t.Fatal(err)
	}
	sums := Family.Summarize(sc, table)
	if len(sums) != 2 {
		t.Fatalf("%d summaries, want 2", len(sums))
	}
	for i, s := range sums {
		vals := map[string]float64{}
		for _, v := range s.Values {
			vals[v.Name] = v.Value
		}
		last := table.Rounds[i][len(table.Rounds[i])-1]
		var total float64
		for _, k := range termKeys {
			total += vals[k]
		}
		if got := last.Value(boundIdx); math.Abs(total-got) > 1e-12*got {
			t.Errorf("%s: terms add to %v, the bound drawn is %v", s.Label, total, got)
		}
		if got, want := vals["bound_over_measured"], last.Value(boundIdx)/last.Value(avgIdx); got != want {
			t.Errorf("%s: ratio %v, want %v", s.Label, got, want)
		}
		full := i == 1
		if full != (vals["term_variance"] == 0 && vals["term_local_variance"] == 0) {
			t.Errorf("%s: variance terms %v, %v", s.Label, vals["term_variance"], vals["term_local_variance"])
		}
	}
	d := res.Data.(*Data)
	for _, text := range []string{Family.Help(sc), strings.Join(res.Facts.Notes, " ")} {
		for _, want := range []string{fmt.Sprintf("%.3g", d.Sigma2), fmt.Sprintf("%.3g", d.Seen.Sigma2), fmt.Sprintf("%.3g", d.Zeta),
			fmt.Sprintf("%.3g", d.Seen.Zeta), fmt.Sprintf("%.3g", d.Radius)} {
			if !strings.Contains(text, want) {
				t.Errorf("%q does not give %s", text, want)
			}
		}
	}
}
