package tui

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

// familyRunner streams newton/lowrank-shaped rounds without numerics:
// test MSE falling to 1 + 0.1i, accuracy 0.5 + 0.1i, suboptimality 10^−t and
// oracle complexity 100·t·(i+1).
func familyRunner(ctx context.Context, sc experiment.Scenario, ready func(experiment.Facts), emit func(experiment.Point)) (experiment.Result, error) {
	racers := sc.Resolve()
	ready(experiment.NoFacts())
	for t := 1; t <= sc.Rounds; t++ {
		for i := range racers {
			if err := ctx.Err(); err != nil {
				return experiment.Result{}, err
			}
			f := float64(i)
			emit(experiment.Point{Racer: i, Round: algorithms.Round{Index: t,
				TestMSE: 1 + 0.1*f + math.Pow(0.5, float64(t)), TestAcc: math.NaN(), EstError: math.Pow(0.5, float64(t)),
				Subopt: math.Pow(10, -float64(t)), GradNorm: 1 / float64(t), Oracle: 100 * float64(t) * (f + 1)}})
		}
	}
	return experiment.Result{Racers: racers, Errs: make([]error, len(racers))}, nil
}

func presetModel(t *testing.T, name string, r Runner) *Model {
	t.Helper()
	p, err := experiment.LookupPreset(name)
	if err != nil {
		t.Fatal(err)
	}
	sc := p.Scenario()
	sc.Rounds = 12
	m := NewModel(context.Background(), sc, WithRunner(r), WithClock(fixedClock))
	t.Cleanup(m.Close)
	return m
}

func TestNewtonRunView(t *testing.T) {
	m := presetModel(t, "newton-rounds", familyRunner)
	drain(t, m, m.Init())
	v := view(m)
	for _, want := range []string{"test MSE (linear)", "distance to KRR", "FedNewton", "KRR", "round 12/12"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestLowRankOracleAxis(t *testing.T) {
	m := presetModel(t, "lowrank", familyRunner)
	drain(t, m, m.Init())
	if v := view(m); !strings.Contains(v, "x: epochs") || !strings.Contains(v, "suboptimality") {
		t.Fatalf("epochs view:\n%s", v)
	}
	m.Update(keyMsg("x"))
	v := view(m)
	// Oracle range 100 … 100·12·5 = 6000, labelled on a log axis.
	if !strings.Contains(v, "oracle complexity Γ (log)") || !strings.Contains(v, "6k") || !strings.Contains(v, "100") {
		t.Errorf("oracle view:\n%s", v)
	}
	if m.restarts() != 0 {
		t.Error("toggling the axis restarted the run")
	}
}

// restarts is how many runs were started after the first.
func (m *Model) restarts() int { return m.runID - 1 }

func TestDataPrompt(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	m.Update(keyMsg("d"))
	if m.screen != screenData || !strings.Contains(view(m), "data file:") {
		t.Fatalf("d did not open the prompt:\n%s", view(m))
	}
	missing := filepath.Join(t.TempDir(), "missing.libsvm")
	for _, r := range missing {
		m.Update(keyMsg(string(r)))
	}
	m.Update(keyMsg("enter"))
	if m.screen != screenData || !strings.Contains(view(m), "cannot read data file") || m.sc.Family != experiment.FamilyLinear {
		t.Fatalf("missing file: screen %v, family %q:\n%s", m.screen, m.sc.Family, view(m))
	}
	good := filepath.Join(t.TempDir(), "d.libsvm")
	if err := os.WriteFile(good, []byte("1 1:0.5\n2 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.dataInput.SetValue(good)
	before := m.runID
	m.Update(keyMsg("enter"))
	if m.screen != screenRun || m.sc.Newton.DataPath != good || m.sc.Family != experiment.FamilyNewton || m.runID != before+1 {
		t.Errorf("good file: screen %v, path %q, family %q, runID %d→%d", m.screen, m.sc.Newton.DataPath, m.sc.Family, before, m.runID)
	}
	m.Update(keyMsg("d"))
	m.Update(keyMsg("esc"))
	if m.screen != screenRun {
		t.Error("esc did not close the prompt")
	}
}
