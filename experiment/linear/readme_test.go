package linear

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// TestReadmeNumbers pins every number the README states about the default
// screen (paradox, seed 1): each is computed here from a run of the
// preset, written as the README writes it, and must appear in the README
// (whitespace collapsed) — so the README and the code cannot drift apart.
func TestReadmeNumbers(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skipf("README not found: %v", err)
	}
	readme := strings.Join(strings.Fields(string(raw)), " ")
	sc, err := experiment.NewCatalog(Family).Scenario("paradox")
	if err != nil {
		t.Fatal(err)
	}
	table := experiment.NewTable(sc)
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Data.(*model.Problem)
	g, e := experiment.MetricIndex(table.Metrics, "grad_norm"), experiment.MetricIndex(table.Metrics, "est_error")
	at := func(racer, round, metric int) float64 { return table.Rounds[racer][round].Value(metric) }
	final := func(racer, metric int) float64 { return at(racer, len(table.Rounds[racer])-1, metric) }
	sums := Family.Summarize(sc, table)
	value := func(racer int, name string) float64 {
		for _, v := range sums[racer].Values {
			if v.Name == name {
				return v.Value
			}
		}
		t.Fatalf("%s: no %s", sums[racer].Label, name)
		return 0
	}
	reach := func(r int) int { return int(value(r, "rounds_to_5pct")) }
	saving := func(r int) float64 { return float64(reach(0)) / float64(reach(r)) }
	theory := lsTheory(cfg(sc))[0].Value
	fedprox := final(3, e)
	if d := math.Abs(fedprox-p.LSError) / p.LSError; d > 0.005 {
		t.Errorf("FedProx ends %.2f %% from least squares; the README says within 0.5 %%", 100*d)
	}
	for _, phrase := range []string{
		fmt.Sprintf("%d and %d rounds against %d for s = 1 on the default seed, a %.2f× and %.2f× saving", reach(1), reach(2), reach(0), saving(1), saving(2)),
		fmt.Sprintf("(%d rounds; its error is %.3f at round 30, against %.3f for s = 1 and %.3f for s = 5)", reach(3), at(3, 30, e), at(0, 30, e), at(1, 30, e)),
		fmt.Sprintf("┄ pooled least squares %.3g ╌ σ√(d/(N−d−1)) %.3g", p.LSError, theory),
		fmt.Sprintf("─ 1 FedAvg s=1 %s %.3g within 5 %% from round %d", sci(final(0, g)), final(0, e), reach(0)),
		fmt.Sprintf("• 2 FedAvg s=5 %.3g %.3g within 5 %% from round %d · %.2f× fewer rounds", final(1, g), final(1, e), reach(1), saving(1)),
		fmt.Sprintf("× 3 FedAvg s=10 %.3g %.3g within 5 %% from round %d · %.2f× fewer rounds", final(2, g), final(2, e), reach(2), saving(2)),
		fmt.Sprintf("+ 4 FedProx %.3g %.3g within 5 %% from round %d · %.2f× more rounds", final(3, g), final(3, e), reach(3), 1/saving(3)),
		fmt.Sprintf("plateaus %.3g (s=10), %.3g (s=5) and %.3g (FedProx)", final(2, g), final(1, g), final(3, g)),
		fmt.Sprintf("(\"within 5 %% from round %d · %.2f× fewer rounds\")", reach(1), saving(1)),
	} {
		if !strings.Contains(readme, phrase) {
			t.Errorf("the README does not say %q", phrase)
		}
	}
}

// sci writes v as the legend does below 1e-4: three significant digits,
// "1.20e-5".
func sci(v float64) string {
	exp := math.Floor(math.Log10(v))
	return fmt.Sprintf("%.2fe%d", v/math.Pow(10, exp), int(exp))
}
