package experiment

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestRuleHolds checks every kind of rule at, inside and outside its
// tolerance, and that a value that is not finite never holds.
func TestRuleHolds(t *testing.T) {
	for i, test := range []struct {
		rule Rule
		v    float64
		want bool
	}{
		{Rule{Kind: Near, Want: 5, Tol: 0.2}, 4.5, true},
		{Rule{Kind: Near, Want: 5, Tol: 0.2}, 4, true},
		{Rule{Kind: Near, Want: 5, Tol: 0.2}, 3.99, false},
		{Rule{Kind: Near, Want: -1, Tol: 0.1}, -1.043, true},
		{Rule{Kind: Near, Want: -1, Tol: 0.1}, -0.85, false},
		{Rule{Kind: Near, Want: 97.12, Tol: 0.3, Abs: true}, 97.03, true},
		{Rule{Kind: Near, Want: 97.12, Tol: 0.3, Abs: true}, 93.02, false},
		{Rule{Kind: AtLeast, Want: 100}, 100, true},
		{Rule{Kind: AtLeast, Want: 100}, 99.9, false},
		{Rule{Kind: AtMost, Want: 1}, 2.6, false},
		{Rule{Kind: AtMost, Want: 1}, 0.65, true},
		{Rule{Kind: Between, Lo: 16, Hi: 19}, 17.5, true},
		{Rule{Kind: Between, Lo: 16, Hi: 19}, 48.5, false},
		{Rule{Kind: AtMost, Want: 1}, math.NaN(), false},
		{Rule{Kind: AtLeast, Want: 1}, math.Inf(1), false},
	} {
		if got := test.rule.Holds(test.v); got != test.want {
			t.Errorf("%d: %s holds for %v = %v, want %v", i, test.rule, test.v, got, test.want)
		}
	}
}

// TestJudge checks the verdict logic on a table of claims: reproduced
// within the tolerance, "differs" with the claim's reason (Fig. 4's
// crossing: the paper reads 7.5, fedscope measures 9.47), the default
// reason, offline data, an experiment not run, a failed measurement and a
// value that is not finite.
func TestJudge(t *testing.T) {
	fig4 := Claim{ID: "fig4", Paper: "≈ 7.5", Rule: Rule{Kind: Near, Want: 7.5, Tol: 0.15}, Differs: "the swept Γ is a radius"}
	plain := Claim{ID: "plain", Rule: Rule{Kind: AtMost, Want: 1}}
	offline := Claim{ID: "mnist", Offline: "MNIST is not available offline"}
	for _, test := range []struct {
		name    string
		claim   Claim
		value   float64
		err     error
		verdict Verdict
		why     string
	}{
		{"within", fig4, 7.9, nil, Reproduced, ""},
		{"crossing differs", fig4, 9.47, nil, Differs, "the swept Γ is a radius"},
		{"default reason", plain, 2.6, nil, Differs, "outside the tolerance"},
		{"holds", plain, 0.65, nil, Reproduced, ""},
		{"offline", offline, math.NaN(), nil, NotHere, "MNIST is not available offline"},
		{"data not given", plain, math.NaN(), &Unavailable{Verdict: NotHere, Reason: "needs pendigits.scale"}, NotHere, "needs pendigits.scale"},
		{"not run", plain, math.NaN(), &Unavailable{Verdict: NotRun, Reason: "left out by --quick"}, NotRun, "left out by --quick"},
		{"failed", plain, 0, errors.New("no column \"x\""), Differs, "not measured: no column \"x\""},
		{"not finite", fig4, math.NaN(), nil, Differs, "no finite value was measured; the swept Γ is a radius"},
	} {
		j := test.claim.Judge(test.value, "", test.err)
		if j.Verdict != test.verdict || j.Why != test.why {
			t.Errorf("%s: %s (%q), want %s (%q)", test.name, j.Verdict, j.Why, test.verdict, test.why)
		}
	}
	// Evaluate: a missing experiment passes its reason on.
	c := Claim{Experiments: []string{"a"}, Rule: Rule{Kind: AtLeast, Want: 0}, Measure: func([]*Measured) (float64, string, error) { return 1, "", nil }}
	if j := c.Evaluate([]*Measured{nil}, []error{&Unavailable{Verdict: NotHere, Reason: "why"}}); j.Verdict != NotHere || j.Why != "why" {
		t.Errorf("missing experiment: %+v", j)
	}
	if j := c.Evaluate([]*Measured{{}}, []error{nil}); j.Verdict != Reproduced || j.Value != 1 {
		t.Errorf("measured: %+v", j)
	}
}

// TestClaimHelpers checks the measurements the families build on against
// values computed by hand.
func TestClaimHelpers(t *testing.T) {
	// FG 1.1044 at 7.9 and 0.921 at 11: log-interpolated crossing of 1.
	want := math.Exp(math.Log(7.9) + math.Log(1.1044)/(math.Log(1.1044)-math.Log(0.921))*(math.Log(11)-math.Log(7.9)))
	if got := Crossing([]float64{5.66, 7.9, 11}, []float64{1.3959, 1.1044, 0.921}, 1); math.Abs(got-want) > 1e-12 || math.Abs(got-9.47) > 0.01 {
		t.Errorf("crossing %v, want %v (≈ 9.47)", got, want)
	}
	if got := Crossing([]float64{1, 2}, []float64{3, 2}, 1); !math.IsNaN(got) {
		t.Errorf("no crossing: %v", got)
	}
	// Errors within 5 % of the final 1.0 from round 3 on.
	if got := RoundsToWithin([]float64{0, 1, 2, 3, 4}, []float64{9, 2, 1.2, 1.04, 1}, 0.05); got != 3 {
		t.Errorf("rounds to 5 %%: %v, want 3", got)
	}
	if got := Slope([]float64{1, 2, 3}, []float64{2, 4, 6}); got != 2 {
		t.Errorf("slope %v", got)
	}
	if got := RSquared([]float64{1, 2, 3}, []float64{2, 4, 6}); math.Abs(got-1) > 1e-15 {
		t.Errorf("R² %v", got)
	}
	if got := (Rule{Kind: Near, Want: 25, Tol: 0.15}).String(); got != "within 15 % of 25" {
		t.Errorf("rule %q", got)
	}
	if got := Short(-1.0431234); !strings.HasPrefix(got, "-1.043") {
		t.Errorf("short %q", got)
	}
}

// TestFrameReadsTable: a table written as CSV reads back with every
// number bit for bit, empty cells as NaN and labels holding commas.
func TestFrameReadsTable(t *testing.T) {
	table := &Table{Labels: []string{"FedAvg s=5, random init", "B"}, Metrics: []Metric{{Name: "x"}, {Name: "y"}},
		Rounds: [][]Round{{{Index: 0, Values: []float64{0.1 + 0.2, math.NaN()}}, {Index: 1, Values: []float64{1e-300, 3}}},
			{{Index: 0, Values: []float64{math.Pi, -2}}}}}
	f, err := FrameOf(table.Write)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Columns, ","); got != "algorithm,round,x,y" {
		t.Errorf("columns %s", got)
	}
	if got := f.Labels(); len(got) != 2 || got[0] != "FedAvg s=5, random init" {
		t.Errorf("labels %q", got)
	}
	rounds, xs, err := f.Series("FedAvg s=5, random init", "round", "x")
	if err != nil || len(xs) != 2 || xs[0] != 0.1+0.2 || xs[1] != 1e-300 || rounds[1] != 1 {
		t.Errorf("series %v %v %v", rounds, xs, err)
	}
	if _, ys, _ := f.Series("FedAvg s=5, random init", "round", "y"); !math.IsNaN(ys[0]) {
		t.Errorf("empty cell read as %v, want NaN", ys[0])
	}
	if _, _, err := f.Series("C", "round", "x"); err == nil {
		t.Error("an unknown racer gave no error")
	}
	if _, _, err := f.Series("B", "round", "z"); err == nil {
		t.Error("an unknown column gave no error")
	}
	if _, err := ReadFrame(strings.NewReader("a,b\n1,2\n")); err == nil {
		t.Error("a table without the algorithm column was read")
	}
}

// TestGridScale: log-spaced grids are drawn on a log axis, those that
// start at 0 evenly spaced, the others linearly.
func TestGridScale(t *testing.T) {
	for _, test := range []struct {
		grid []float64
		want string
	}{
		{[]float64{0.01, 0.014, 0.0195, 0.0272, 0.038, 0.053, 0.074, 0.103}, "log"},
		{[]float64{1e-2, 3e-3, 1e-3, 3e-4, 1e-4}, "log"},
		{[]float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1}, "index"},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "linear"},
		{[]float64{5, 10, 20, 25, 40, 50, 80, 100, 125}, "linear"},
	} {
		if got := gridScale(test.grid); got != test.want {
			t.Errorf("%v: %s, want %s", test.grid, got, test.want)
		}
	}
}
