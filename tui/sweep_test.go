package tui

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// fakeSweep emits every (point, trial) of a sweep in the engine's order
// without numerics: racer r's metric k at grid point i is
// (1 + k)·100/(1 + i) + r + trial/10, so means are known in closed form.
func fakeSweep(ctx context.Context, sc experiment.Scenario, emit func(experiment.TrialResult)) error {
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		return err
	}
	racers := len(table.Labels)
	for t := 0; t < sc.Trials; t++ {
		for i := range sc.Sweep.Grid {
			if err := ctx.Err(); err != nil {
				return err
			}
			vals := make([][]float64, racers)
			for r := range vals {
				vals[r] = []float64{100/(1+float64(i)) + float64(r) + float64(t)/10, 200/(1+float64(i)) + float64(r)}
				for len(vals[r]) < len(table.Metrics) { // e.g. the newton sweeps' extra columns
					vals[r] = append(vals[r], 0)
				}
				if sc.Family == experiment.FamilyFedGain {
					// The raw row of a gain trial: local errors, then each
					// gainer's federated error (one value, as in limit mode).
					vals[r] = append(vals[r], 1, 1)
				}
			}
			emit(experiment.TrialResult{Point: i, Trial: t, Values: vals})
		}
	}
	return nil
}

// blockingSweep never emits; it returns when cancelled.
func blockingSweep(ctx context.Context, _ experiment.Scenario, _ func(experiment.TrialResult)) error {
	<-ctx.Done()
	return ctx.Err()
}

func sweepPreset(t testing.TB, name string, trials int) experiment.Scenario {
	t.Helper()
	p, err := experiment.LookupPreset(name)
	if err != nil {
		t.Fatal(err)
	}
	sc := p.Scenario()
	sc.Trials = trials
	return sc
}

func newSweepModel(t *testing.T, sc experiment.Scenario, r SweepRunner) (*Model, tea.Cmd) {
	t.Helper()
	m := NewModel(context.Background(), sc, WithSweepRunner(r), WithClock(fixedClock))
	t.Cleanup(m.Close)
	cmd := m.Init()
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return m, cmd
}

// drainSweep runs a sweep's messages through Update until it is done.
func drainSweep(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for m.sweep.state == stateRunning {
		select {
		case <-deadline:
			t.Fatal("sweep did not finish")
		default:
		}
		if cmd == nil {
			cmd = waitForTrials(m.sweep.ch)
		}
		msg := cmd()
		cmd = nil
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				if c == nil {
					continue
				}
				if inner := c(); inner != nil {
					if _, isFrame := inner.(frameMsg); !isFrame {
						_, cmd = m.Update(inner)
					}
				}
			}
			continue
		}
		if msg != nil {
			_, cmd = m.Update(msg)
		}
	}
	m.Update(frameMsg{})
}

func TestSweepPresetOpensTheSweepView(t *testing.T) {
	m, cmd := newSweepModel(t, sweepPreset(t, "fedgain-model", 3), fakeSweep)
	if m.sweep == nil {
		t.Fatal("a sweep preset did not open the sweep view")
	}
	drainSweep(t, m, cmd)
	v := view(m)
	for _, want := range []string{"fedscope · fedgain-model", "FG, first data-scarce client", "FG, first data-rich client",
		"┄ FG = 1", "FG = ‖θ̂−θ*‖/‖θ_fed−θ*‖", "75/75", "done", "model heterogeneity Γ", "FedProx", "0.01", "30"} {
		if !strings.Contains(v, want) {
			t.Errorf("sweep view lacks %q:\n%s", want, v)
		}
	}
	// The table holds the fake's closed-form means: at point 0, racer 1,
	// metric 0, trials 0..2 give 100 + 1 + {0, 0.1, 0.2}.
	if mean, _, n := m.sweep.table.Stat(0, 1, 0); n != 3 || math.Abs(mean-101.1) > 1e-12 {
		t.Errorf("mean %v over %d trials, want 101.1 over 3", mean, n)
	}
	for i, l := range strings.Split(v, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("line %d is %d cells wide", i, ansi.StringWidth(l))
		}
	}
}

// TestSweepCurvesFillIn: after the first few trials (the coarse pass) the
// charts already draw curves, and the progress counts them.
func TestSweepCurvesFillIn(t *testing.T) {
	m, _ := newSweepModel(t, sweepPreset(t, "fedgain-covariate", 2), blockingSweep)
	before := view(m)
	if !strings.Contains(before, "0/200") || strings.Contains(before, "+++") {
		t.Fatalf("before any trial:\n%s", before)
	}
	var results []experiment.TrialResult
	fakeSweep(context.Background(), m.sweep.sc, func(r experiment.TrialResult) { results = append(results, r) })
	// Three coarse points of trial 0: both ends and the middle.
	var batch []experiment.TrialResult
	for _, r := range results {
		if r.Trial == 0 && (r.Point == 0 || r.Point == 99 || r.Point == 64) {
			batch = append(batch, r)
		}
	}
	m.Update(trialsMsg{runID: m.sweep.runID, results: batch})
	m.Update(frameMsg{})
	after := view(m)
	if !strings.Contains(after, "3/200") || !strings.Contains(after, "+++") {
		t.Errorf("after the coarse pass:\n%s", after)
	}
}

func TestSweepStaleMessagesAreIgnored(t *testing.T) {
	m, _ := newSweepModel(t, sweepPreset(t, "polynomial", 2), blockingSweep)
	old := m.sweep.runID
	m.Update(keyMsg("r"))
	if m.sweep.runID != old+1 {
		t.Fatalf("restart: runID %d, want %d", m.sweep.runID, old+1)
	}
	r := experiment.TrialResult{Point: 0, Trial: 0, Values: [][]float64{{1, 1}, {1, 1}, {1, 1}, {1, 1}}}
	if _, cmd := m.Update(trialsMsg{runID: old, results: []experiment.TrialResult{r}}); cmd != nil || m.sweep.table.Done() != 0 {
		t.Fatal("a stale trial was recorded or re-armed the stream")
	}
	m.Update(sweepDoneMsg{runID: old})
	if m.sweep.state != stateRunning {
		t.Fatalf("a stale done message ended the sweep: state %v", m.sweep.state)
	}
	if _, cmd := m.Update(trialsMsg{runID: m.sweep.runID, results: []experiment.TrialResult{r}}); cmd == nil || m.sweep.table.Done() != 1 {
		t.Fatal("a current trial was not recorded")
	}
}

func TestSweepKeys(t *testing.T) {
	m, _ := newSweepModel(t, sweepPreset(t, "fedgain-model", 2), blockingSweep)
	id := m.sweep.runID
	m.Update(keyMsg("s"))
	if !m.sweep.sc.Squared || m.sweep.runID != id+1 || !strings.Contains(view(m), "FG = ‖θ̂−θ*‖²/‖θ_fed−θ*‖²") {
		t.Errorf("s: squared %v, runID %d:\n%s", m.sweep.sc.Squared, m.sweep.runID, view(m))
	}
	m.Update(keyMsg("f"))
	if m.sweep.sc.FedError != model.FedErrorFinal || !strings.Contains(view(m), "fed error: final") {
		t.Errorf("f: fed error %v", m.sweep.sc.FedError)
	}
	m.Update(keyMsg("n"))
	if m.sweep.sc.Seed != 2 {
		t.Errorf("n: seed %d, want 2", m.sweep.sc.Seed)
	}
	m.Update(keyMsg(" "))
	if !m.sweep.paused || !strings.Contains(view(m), "paused") {
		t.Error("space did not pause")
	}
	m.Update(keyMsg(" "))
	m.Update(keyMsg("x"))
	if m.sweep.state != stateStopped || !strings.Contains(view(m), "stopped") {
		t.Errorf("x: state %v", m.sweep.state)
	}
	m.Update(keyMsg("?"))
	if !strings.Contains(view(m), "federated error: min / final / limit") {
		t.Errorf("help overlay:\n%s", view(m))
	}
	m.Update(keyMsg("esc"))
	// The preset picker leads back to the run view.
	m.Update(keyMsg("p"))
	for m.sweep.picker.items[m.sweep.picker.cursor].preset != "minibatch" {
		m.Update(tea.KeyMsg{Type: tea.KeyUp})
	}
	m.Update(keyMsg("enter"))
	if m.sweep != nil || m.sc.Preset != "minibatch" {
		t.Errorf("picker: sweep %v, preset %q", m.sweep != nil, m.sc.Preset)
	}
	if _, cmd := m.Update(keyMsg("q")); cmd == nil {
		t.Error("q did not quit the run view")
	}
}

// TestSweepRatioKeysOnPolynomial: keys that do not apply explain why.
func TestSweepRatioKeysOnPolynomial(t *testing.T) {
	m, _ := newSweepModel(t, sweepPreset(t, "polynomial", 2), blockingSweep)
	id := m.sweep.runID
	m.Update(keyMsg("s"))
	m.Update(keyMsg("f"))
	if m.sweep.runID != id || !strings.Contains(view(m), "closed-form limit") {
		t.Errorf("s/f restarted the polynomial sweep or said nothing:\n%s", view(m))
	}
}

func TestSweepQuitAtOnce(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m, _ := newSweepModel(t, sweepPreset(t, "fedgain-model", 2), blockingSweep)
		_, cmd := m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s did not quit", k)
		}
	}
}

func TestSweepNoPanicAtAnySize(t *testing.T) {
	for _, preset := range []string{"fedgain-model", "fedgain-covariate", "polynomial"} {
		m, cmd := newSweepModel(t, sweepPreset(t, preset, 1), fakeSweep)
		drainSweep(t, m, cmd)
		for _, size := range [][2]int{{80, 24}, {160, 48}, {50, 14}, {30, 8}, {1, 1}, {200, 60}} {
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			lines := strings.Split(view(m), "\n")
			if len(lines) != size[1] {
				t.Errorf("%s %v: %d lines", preset, size, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > size[0] {
					t.Errorf("%s %v: line of %d cells", preset, size, ansi.StringWidth(l))
				}
			}
		}
	}
}

func TestFillGaps(t *testing.T) {
	nan := math.NaN()
	got := fillGaps([]float64{nan, 1, nan, nan, 1000, nan}, true)
	want := []float64{nan, 1, 10, 100, 1000, nan}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-9*want[i]) {
			t.Errorf("log: %v, want %v", got, want)
			break
		}
	}
	if got := fillGaps([]float64{0, nan, 4}, false); got[1] != 2 {
		t.Errorf("linear: %v", got)
	}
}

// TestLogTicksLabelEachDecadeOnce: when two rows are equally near a power of
// ten only one carries its label.
func TestLogTicksLabelEachDecadeOnce(t *testing.T) {
	for rows := 3; rows < 30; rows++ {
		lo, hi := 1.0, 3.0
		step := (hi - lo) / float64(rows-1)
		seen := map[string]int{}
		for r := 0; r < rows; r++ {
			if l := tickLabel(hi-float64(r)*step, step, lo, hi, true); l != "" {
				seen[l]++
			}
		}
		for l, n := range seen {
			if n > 1 {
				t.Errorf("%d rows: label %s on %d rows", rows, l, n)
			}
		}
	}
}

// TestSubspaceKeys: o/O move r along its ladder, rescale η ∝ r (E000-4) and
// return to r = d (0) with η restored.
func TestSubspaceKeys(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	m.Update(keyMsg("o"))
	if m.sc.Data.SubspaceDim != 70 || math.Abs(m.sc.Eta-0.07) > 1e-15 {
		t.Errorf("o: r=%d η=%v, want 70, 0.07", m.sc.Data.SubspaceDim, m.sc.Eta)
	}
	if !strings.Contains(view(m), "r=70") {
		t.Errorf("title does not show r:\n%s", view(m))
	}
	m.Update(keyMsg("o"))
	m.Update(keyMsg("O"))
	m.Update(keyMsg("O"))
	if m.sc.Data.SubspaceDim != 0 || m.sc.Eta != 0.1 {
		t.Errorf("back up: r=%d η=%v, want 0 (= d), 0.1", m.sc.Data.SubspaceDim, m.sc.Eta)
	}
}

// fakeNewtonSweep emits newton-heterogeneity's four metrics per curve: test
// MSE 1 + curve/10 + point/100, diverged = 1 for the last curve (FedProx)
// at the last grid value (its MSE then +Inf, as the engine reports it),
// Δ_Dj = 0.25·(point+1) and Δ_fj = 0.
func fakeNewtonSweep(ctx context.Context, sc experiment.Scenario, emit func(experiment.TrialResult)) error {
	curves := 8
	for t := 0; t < sc.Trials; t++ {
		for i := range sc.Sweep.Grid {
			if err := ctx.Err(); err != nil {
				return err
			}
			vals := make([][]float64, curves)
			for r := range vals {
				mse, div := 1+float64(r)/10+float64(i)/100, 0.0
				if r == curves-1 && i == len(sc.Sweep.Grid)-1 {
					mse, div = math.Inf(1), 1
				}
				vals[r] = []float64{mse, div, 0.25 * float64(i+1), 0}
			}
			emit(experiment.TrialResult{Point: i, Trial: t, Values: vals})
		}
	}
	return nil
}

// TestNewtonSweepView: newton-heterogeneity opens the sweep view at 80×24
// with one chart (the table-only metrics are not drawn), the eight curves'
// legend compacted to fit, α = 0 labelled "0" at the left of the x axis, v
// relabelling x with the measured Δ_Dj, and the diverged racer named.
func TestNewtonSweepView(t *testing.T) {
	m, cmd := newSweepModel(t, sweepPreset(t, "newton-heterogeneity", 2), fakeNewtonSweep)
	drainSweep(t, m, cmd)
	v := view(m)
	for _, want := range []string{"test MSE (log)", "× FedNewton t=1  + t=2  o t=4  # t=8  * FedAvg s=2  ~ FedProx",
		"x: data heterogeneity α", "diverged, left out of the means: FedProx (1 of 8 values)", "16/16"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "Δ_Dj (p_j-weighted mean)") || strings.Contains(v, "fraction of trials") {
		t.Errorf("a table-only metric is charted:\n%s", v)
	}
	lines := strings.Split(v, "\n")
	axis := func() string {
		for i, l := range lines {
			if strings.Contains(l, "└") {
				return lines[i+1]
			}
		}
		t.Fatalf("no x axis:\n%s", v)
		return ""
	}
	if f := strings.Fields(axis()); len(f) < 2 || f[0] != "0" || f[len(f)-1] != "1" {
		t.Errorf("x labels %q, want 0 … 1", f)
	}
	m.Update(keyMsg("v"))
	v = view(m)
	lines = strings.Split(v, "\n")
	if f := strings.Fields(axis()); len(f) < 2 || f[0] != "0.25" || f[len(f)-1] != "2" {
		t.Errorf("x labels after v: %q, want Δ_Dj 0.25 … 2", f)
	}
	if !strings.Contains(v, "labelled with the empirical Δ_Dj") {
		t.Errorf("status after v:\n%s", v)
	}
}
