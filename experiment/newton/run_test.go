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

// TestRacerCacheReplay: after a key press that changes η on a warm engine,
// the racers that do not depend on η replay their kept rounds, and the
// whole table is the same bytes as a fresh run at the new η; a press back
// to the first η replays every racer, the same bytes as the first run.
func TestRacerCacheReplay(t *testing.T) {
	sc := preset(t, "newton-rounds", "rounds=6", "algorithms=krr,dkrr,fednewton,fednewton:damped,fedavg,fedavg:s=4,fedprox")
	warm := experiment.NewEngine()
	runOn := func(e *experiment.Engine, sc experiment.Scenario) string {
		t.Helper()
		table := experiment.NewTable(sc)
		res, err := e.Run(context.Background(), sc, experiment.Observer{Round: table.Add})
		if err != nil || len(res.Failed()) > 0 {
			t.Fatalf("%v %v", err, res.Failed())
		}
		var b bytes.Buffer
		if err := table.Write(&b, experiment.CSV); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	first := runOn(warm, sc)
	pressed := sc
	if err := pressed.Set("eta", "0.37"); err != nil {
		t.Fatal(err)
	}
	before := replays.Load()
	if got, want := runOn(warm, pressed), runCSV(t, pressed); got != want {
		t.Errorf("η pressed on a warm engine:\n%s\nfresh:\n%s", got, want)
	}
	// KRR, DKRR, both FedNewtons and FedProx replayed; the two FedAvgs ran.
	if n := replays.Load() - before; n != 5 {
		t.Errorf("η pressed: %d racers replayed, want 5", n)
	}
	before = replays.Load()
	if got := runOn(warm, sc); got != first {
		t.Errorf("η back on a warm engine:\n%s\nfirst run:\n%s", got, first)
	}
	if n := replays.Load() - before; n != 7 {
		t.Errorf("η back: %d racers replayed, want 7", n)
	}
	if got := runCSV(t, sc); got != first {
		t.Errorf("fresh run differs from the first")
	}
}
