package newton

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// runCSV runs a scenario on a fresh engine (data prepared afresh) and
// returns its table as CSV.
func runCSV(t *testing.T, sc experiment.Scenario) string {
	t.Helper()
	table := experiment.NewTable(sc)
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add})
	if err != nil || len(res.Failed()) > 0 {
		t.Fatalf("%s: %v %v", sc.Preset, err, res.Failed())
	}
	var b bytes.Buffer
	if err := table.Write(&b, experiment.CSV); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestNewtonRoundsShape: the newton-rounds preset races KRR, DKRR,
// FedNewton, FedAvg and FedProx (docs/papers.md §4.7, E003-5), and the same seed
// gives the same output with the data prepared afresh.
func TestNewtonRoundsShape(t *testing.T) {
	sc := preset(t, "newton-rounds", "rounds=4")
	out := runCSV(t, sc)
	header, rows := readCSV(t, out)
	if got := strings.Join(header, ","); got != "algorithm,round,test_mse,test_acc,grad_norm,krr_dist" {
		t.Errorf("header %s", got)
	}
	if got := strings.Join(labelsOf(rows), ","); got != "KRR,DKRR,FedNewton,FedAvg s=2,FedProx" {
		t.Errorf("racers %s", got)
	}
	if len(rows) != 5*4 {
		t.Errorf("%d rows, want 5 racers × 4 rounds", len(rows))
	}
	if again := runCSV(t, sc); again != out {
		t.Error("same seed, different output")
	}
}
