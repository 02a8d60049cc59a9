package tui

import (
	"context"
	"math"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
)

// fakeSweep emits every (point, trial) of a sweep in the engine's order
// without numerics: racer r's metric k at grid point i is
// (1 + k)·100/(1 + i) + r + trial/10, so the means are known in closed form;
// a family with its own statistic gets rows it can read (see fakeRow).
func fakeSweep(ctx context.Context, sc experiment.Scenario, emit func(experiment.TrialResult)) error {
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		return err
	}
	for tr := 0; tr < sc.Trials; tr++ {
		for i := range sc.Sweep.Grid {
			if err := ctx.Err(); err != nil {
				return err
			}
			vals := make([][]float64, len(table.Labels))
			for r := range vals {
				vals[r] = fakeRow(sc, len(table.Metrics), i, r, tr)
			}
			emit(experiment.TrialResult{Point: i, Trial: tr, Values: vals})
		}
	}
	return nil
}

// fakeRow is one racer's row of a fake trial. The federation-gain sweep
// reads raw rows (local errors, then each gainer's federated errors); the
// others read one value per metric.
func fakeRow(sc experiment.Scenario, metrics, i, r, tr int) []float64 {
	if sc.Get("fg_ratio") != "" {
		// The federation gain's raw row: the realised Γ, the two clients'
		// local errors, then their federated errors (one value each).
		return []float64{1.6 * sc.Sweep.Grid[i], 100/(1+float64(i)) + float64(r) + float64(tr)/10, 10 / (1 + float64(i)), 1, 1}
	}
	row := make([]float64, metrics)
	for k := range row {
		row[k] = float64(1+k)*100/(1+float64(i)) + float64(r) + float64(tr)/10
	}
	return row
}

// blockingSweep never emits; it returns when cancelled.
func blockingSweep(ctx context.Context, _ experiment.Scenario, _ func(experiment.TrialResult)) error {
	<-ctx.Done()
	return ctx.Err()
}

// sweepHarness opens a sweep preset with a runner.
func sweepHarness(t *testing.T, name string, trials int, run SweepRunner) *harness {
	sc := preset(t, name)
	sc.Trials = trials
	h := newHarness(t, sc, WithSweepRunner(run))
	h.size(80, 24)
	return h
}

func (h *harness) sweep() *sweepView { return h.m.v.(*sweepView) }

func TestSweepPresetOpensTheSweepView(t *testing.T) {
	h := sweepHarness(t, "polynomial", 3, fakeSweep).start()
	v := h.sweep()
	if v.state != stateDone || v.table.Done() != 30 {
		t.Fatalf("state %v, %d trials done", v.state, v.table.Done())
	}
	h.exec(func() tea.Msg { return sweepFrameMsg{v.runID} })
	screen := h.screen()
	for _, want := range []string{"fedscope · polynomial", "mse", "30/30", "done", "FedAvg s=1", "FedProx"} {
		if !strings.Contains(strings.ToLower(screen), strings.ToLower(want)) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	// Racer 1's MSE at grid point 0 averages 100 + 1 + (0 + 0.1 + 0.2)/3.
	if mean, _, n := v.table.Stat(0, 1, 0); n != 3 || math.Abs(mean-101.1) > 1e-12 {
		t.Errorf("stat %v over %d trials, want 101.1 over 3", mean, n)
	}
}

func TestSweepStaleMessagesAreIgnored(t *testing.T) {
	h := sweepHarness(t, "polynomial", 2, blockingSweep)
	h.m.Init()
	v := h.sweep()
	old := v.runID
	h.press("r")
	h.m.Update(trialsMsg{runID: old, results: []experiment.TrialResult{{Point: 0, Trial: 0, Values: [][]float64{{1, 1}}}}})
	if v.table.Done() != 0 {
		t.Fatal("a stale trial was recorded")
	}
	h.m.Update(sweepDoneMsg{runID: old})
	if v.state != stateRunning {
		t.Fatalf("a stale done message ended the sweep: %v", v.state)
	}
}

func TestSweepKeys(t *testing.T) {
	h := sweepHarness(t, "fedgain-model", 2, blockingSweep)
	h.m.Init()
	v := h.sweep()
	h.press("n")
	if v.sc.Seed != 2 {
		t.Errorf("n: seed %d, want 2", v.sc.Seed)
	}
	h.press(" ")
	if !v.paused || !strings.Contains(h.screen(), "paused") {
		t.Error("space did not pause")
	}
	h.press(" ")
	h.press("S")
	if v.state != stateStopped || !strings.Contains(h.screen(), "stopped") {
		t.Errorf("S: state %v", v.state)
	}
	h.press("?")
	// The help scrolls when taller than the screen: page down to the keys.
	for i := 0; i < 5 && !strings.Contains(h.screen(), "stop, keeping the trials done"); i++ {
		h.press("pgdown")
	}
	if !strings.Contains(h.screen(), "stop, keeping the trials done") {
		t.Errorf("help overlay:\n%s", h.screen())
	}
	h.press("esc")
	// The preset picker leads back to a run view.
	h.press("p")
	for h.m.picker.items[h.m.picker.cursor].preset != "minibatch" {
		h.press("up")
	}
	h.press("enter")
	if _, ok := h.m.v.(*runView); !ok || h.m.v.scenario().Preset != "minibatch" {
		t.Errorf("picker: view %T, preset %q", h.m.v, h.m.v.scenario().Preset)
	}
}

func TestSweepQuitAtOnce(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		h := sweepHarness(t, "fedgain-model", 2, blockingSweep)
		h.m.Init()
		cmd := h.press(k)
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s did not quit", k)
		}
	}
}

func TestSweepNoPanicAtAnySize(t *testing.T) {
	for _, name := range []string{"fedgain-model", "fedgain-covariate", "polynomial", "newton-heterogeneity"} {
		h := sweepHarness(t, name, 1, fakeSweep).start()
		for _, size := range [][2]int{{80, 24}, {160, 48}, {50, 14}, {30, 8}, {1, 1}, {200, 60}} {
			h.size(size[0], size[1])
			for _, k := range []string{"x", "l", "?", "esc", "t", "i"} {
				h.press(k)
			}
			lines := strings.Split(h.m.View(), "\n")
			if len(lines) != size[1] {
				t.Errorf("%s %v: %d lines", name, size, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > size[0] {
					t.Errorf("%s %v: a line of %d cells", name, size, ansi.StringWidth(l))
				}
			}
		}
	}
}

func TestFillGaps(t *testing.T) {
	nan := math.NaN()
	got := fillGaps([]float64{nan, 1, nan, nan, 8, nan}, true)
	want := []float64{nan, 1, 2, 4, 8, nan}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12) {
			t.Fatalf("fillGaps = %v, want %v (geometric on a log axis)", got, want)
		}
	}
}

// TestNewtonSweepAxisLabels checks x relabels the newton-heterogeneity axis
// with the measured heterogeneity.
func TestNewtonSweepAxisLabels(t *testing.T) {
	h := sweepHarness(t, "newton-heterogeneity", 1, fakeSweep).start()
	h.exec(func() tea.Msg { return sweepFrameMsg{h.sweep().runID} })
	h.press("x")
	if !strings.Contains(h.screen(), "labelled with the empirical Δ_Dj") {
		t.Errorf("x did not relabel the axis:\n%s", h.screen())
	}
}

// TestSweepNamesPartlyDivergedPoints: where some trials of a racer
// diverged, the means average the others; the sweep view says at which
// values and how many, and a value where all diverged is a gap.
func TestSweepNamesPartlyDivergedPoints(t *testing.T) {
	const trials = 4
	run := func(ctx context.Context, sc experiment.Scenario, emit func(experiment.TrialResult)) error {
		table, _ := experiment.NewSweepTable(sc)
		for tr := 0; tr < sc.Trials; tr++ {
			for i := range sc.Sweep.Grid {
				vals := make([][]float64, len(table.Labels))
				for r := range vals {
					mse, div := 1.0, 0.0
					if r == 2 && (i == 8 || (i == 7 && tr == 0)) { // the first FedNewton curve
						mse, div = math.Inf(1), 1
					}
					vals[r] = []float64{mse, div, div, 0.5, 100}
				}
				emit(experiment.TrialResult{Point: i, Trial: tr, Values: vals})
			}
		}
		return nil
	}
	h := sweepHarness(t, "newton-local-size", trials, run)
	h.size(160, 48)
	h.start()
	v := h.sweep()
	h.exec(func() tea.Msg { return sweepFrameMsg{v.runID} })
	screen := strings.Join(strings.Fields(h.screen()), " ")
	label := v.table.Labels[2]
	want := label + " at clients=100 (1/4), 125 (all 4)"
	if !strings.Contains(screen, want) {
		t.Errorf("screen lacks %q:\n%s", want, h.screen())
	}
	if strings.Count(screen, " at clients=") != 1 {
		t.Errorf("other racers are named as diverged:\n%s", h.screen())
	}
}

// TestSweepCursorReadsTheMeans: ← → put the cursor on a grid value and the
// legend reads each racer's charted means there, as the table has them.
func TestSweepCursorReadsTheMeans(t *testing.T) {
	h := sweepHarness(t, "polynomial", 3, fakeSweep).start()
	h.size(160, 48)
	v := h.sweep()
	h.key("end")
	h.key("left") // the second-to-last value
	p := len(v.table.Grid) - 2
	screen := strings.Join(strings.Fields(h.screen()), " ")
	if !strings.Contains(screen, "reading samples="+experiment.FormatFloat(v.table.Grid[p])) {
		t.Errorf("status lacks the cursor's value:\n%s", h.screen())
	}
	for r, label := range v.table.Labels {
		mean, _, _ := v.table.Stat(p, r, 0)
		want := label + " " + formatValue(mean)
		if !strings.Contains(screen, want) {
			t.Errorf("legend lacks %q:\n%s", want, h.screen())
		}
	}
	h.key("home")
	if v.cursor != 1 {
		t.Errorf("home: cursor %d, want 1", v.cursor)
	}
	h.key("right")
	if v.cursor != 2 {
		t.Errorf("right: cursor %d, want 2", v.cursor)
	}
}
