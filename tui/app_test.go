package tui

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/muesli/termenv"
)

func init() {
	// Goldens and text assertions see no colour codes.
	lipgloss.SetColorProfile(termenv.Ascii)
}

// fakeRunner streams a fixed, smooth trajectory for every racer without any
// numerics: the gradient norm of racer i falls like 10·(0.9 − 0.1i)^t and
// stalls for i > 0, the error falls to the reference 0.05.
func fakeRunner(ctx context.Context, sc experiment.Scenario, ready func(experiment.Facts), emit func(experiment.Point)) (experiment.Result, error) {
	racers := sc.Resolve()
	ready(experiment.Facts{LSError: 0.05, RealisedGamma: math.NaN()})
	for t := 1; t <= sc.Rounds; t++ {
		for i := range racers {
			if err := ctx.Err(); err != nil {
				return experiment.Result{}, err
			}
			q := 0.9 - 0.1*float64(i)
			emit(experiment.Point{Racer: i, Round: algorithms.Round{
				Index:       t,
				GradNorm:    10*math.Pow(q, float64(t)) + 0.01*float64(i),
				EstError:    0.05 + 10*math.Pow(q, float64(t)),
				ClientError: math.NaN(),
			}})
		}
	}
	return experiment.Result{Racers: racers, Errs: make([]error, len(racers))}, nil
}

// blockingRunner never emits; it returns when cancelled.
func blockingRunner(ctx context.Context, _ experiment.Scenario, _ func(experiment.Facts), _ func(experiment.Point)) (experiment.Result, error) {
	<-ctx.Done()
	return experiment.Result{}, ctx.Err()
}

func paradox(t testing.TB) experiment.Scenario {
	t.Helper()
	p, err := experiment.LookupPreset("paradox")
	if err != nil {
		t.Fatal(err)
	}
	return p.Scenario()
}

var fixedClock = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

func newTestModel(t *testing.T, r Runner) *Model {
	t.Helper()
	m := NewModel(context.Background(), paradox(t), WithRunner(r), WithClock(fixedClock))
	t.Cleanup(m.Close)
	return m
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case " ":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func view(m *Model) string { return ansi.Strip(m.View()) }

// drain runs a run's messages through Update until it is done.
func drain(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for m.state != stateDone && m.state != stateFailed {
		select {
		case <-deadline:
			t.Fatal("run did not finish")
		default:
		}
		if cmd == nil {
			cmd = waitForStream(m.ch)
		}
		msg := cmd()
		cmd = nil
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				if c != nil {
					if inner := c(); inner != nil {
						if _, isFrame := inner.(frameMsg); !isFrame {
							_, cmd = m.Update(inner)
						}
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

func TestStaleRunMessagesAreIgnored(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	old := m.runID
	m.Update(keyMsg("r")) // restart: a new run id
	if m.runID != old+1 {
		t.Fatalf("restart: runID %d, want %d", m.runID, old+1)
	}
	pt := experiment.Point{Racer: 0, Round: algorithms.Round{Index: 1, GradNorm: 1, EstError: 1}}
	_, cmd := m.Update(pointsMsg{runID: old, points: []experiment.Point{pt}})
	if cmd != nil || m.table.Len() != 0 {
		t.Fatalf("stale points were recorded (rows %d) or re-armed the stream", m.table.Len())
	}
	m.Update(readyMsg{runID: old, facts: experiment.Facts{LSError: 3}})
	if !math.IsNaN(m.facts.LSError) {
		t.Fatalf("stale readyMsg set the reference line to %v", m.facts.LSError)
	}
	m.Update(runDoneMsg{runID: old, err: errors.New("boom")})
	if m.state == stateFailed || m.state == stateDone {
		t.Fatalf("stale runDoneMsg ended the current run: state %v", m.state)
	}
	if _, cmd := m.Update(pointsMsg{runID: m.runID, points: []experiment.Point{pt}}); cmd == nil || m.table.Len() != 1 {
		t.Fatalf("current points: rows %d, re-armed %v", m.table.Len(), cmd != nil)
	}
}

func TestParameterKeysChangeTheScenarioAndRestart(t *testing.T) {
	for _, test := range []struct {
		keys  string
		check func(sc experiment.Scenario) bool
		want  string
	}{
		{"]", func(sc experiment.Scenario) bool { return sc.Eta == 0.15 }, "η 0.1 → 0.15"},
		{"[", func(sc experiment.Scenario) bool { return sc.Eta == 0.07 }, "η 0.1 → 0.07"},
		{"+", func(sc experiment.Scenario) bool { return sc.LocalSteps == 12 }, "s 10 → 12"},
		{"=", func(sc experiment.Scenario) bool { return sc.LocalSteps == 12 }, "= is + without shift"},
		{"-", func(sc experiment.Scenario) bool { return sc.LocalSteps == 9 }, "s 10 → 9"},
		{"H", func(sc experiment.Scenario) bool { return sc.Data.Gamma == 0.01 }, "Γ 0 → 0.01"},
		{"HHh", func(sc experiment.Scenario) bool { return sc.Data.Gamma == 0.01 }, "Γ up, up, down"},
		{"h", func(sc experiment.Scenario) bool { return sc.Data.Gamma == 0 }, "Γ stays at 0"},
		{"n", func(sc experiment.Scenario) bool { return sc.Seed == 2 }, "seed 1 → 2"},
		{"b", func(sc experiment.Scenario) bool { return sc.Batch == 250 }, "full batch → 250"},
		{"bbB", func(sc experiment.Scenario) bool { return sc.Batch == 250 }, "250 → 100 → 250"},
		{"bB", func(sc experiment.Scenario) bool { return sc.Batch == 0 }, "250 → full batch"},
	} {
		m := newTestModel(t, blockingRunner)
		m.Init()
		id := m.runID
		for _, k := range test.keys {
			m.Update(keyMsg(string(k)))
		}
		if !test.check(m.sc) {
			t.Errorf("keys %q (%s): scenario eta=%v s=%d Γ=%v seed=%d B=%d", test.keys, test.want,
				m.sc.Eta, m.sc.LocalSteps, m.sc.Data.Gamma, m.sc.Seed, m.sc.Batch)
		}
		if m.runID <= id && test.keys != "h" {
			t.Errorf("keys %q did not restart the run", test.keys)
		}
	}
}

func TestLogToggleDoesNotRestart(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	id := m.runID
	m.Update(keyMsg("l"))
	if m.logY || m.runID != id {
		t.Fatalf("l: logY=%v runID %d→%d, want linear without restart", m.logY, id, m.runID)
	}
	if !strings.Contains(view(m), "(linear)") {
		t.Fatalf("view does not say linear:\n%s", view(m))
	}
}

func TestFullRunWithFakeRunner(t *testing.T) {
	m := newTestModel(t, fakeRunner)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drain(t, m, m.Init())
	v := view(m)
	for _, want := range []string{"round 150/150", "done", "FedAvg s=1", "FedAvg s=5", "FedAvg s=10", "FedProx",
		"pooled least squares 0.05", "gradient norm", "estimation error"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if got := m.table.Len(); got != 4*150 {
		t.Errorf("table has %d rows, want 600", got)
	}
}

func TestDivergenceIsASentenceNotACrash(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	racers := m.sc.Resolve()
	errs := make([]error, len(racers))
	errs[2] = &experiment.RacerError{Label: "FedAvg s=10", Err: &algorithms.DivergedError{Round: 7, Eta: 1.2, Limit: 0.95, Of: "the local Hessians"}}
	errs[1] = &experiment.RacerError{Label: "FedAvg s=5", Err: &algorithms.DivergedError{Round: 9, Eta: 1.2, Limit: 0.95, Of: "the local Hessians"}}
	m.Update(runDoneMsg{runID: m.runID, res: experiment.Result{Racers: racers, Errs: errs}})
	v := view(m)
	for _, want := range []string{"diverged", "FedAvg s=5 diverged at round 9: η=1.2 exceeds the stable limit 0.95", "also diverged: FedAvg s=10 (round 7)"} {
		if !strings.Contains(strings.ReplaceAll(v, "\n", " "), want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestNoPanicAtAnySize(t *testing.T) {
	m := newTestModel(t, fakeRunner)
	drain(t, m, m.Init())
	for w := 0; w <= 170; w += 7 {
		for h := 0; h <= 50; h += 3 {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			for _, k := range []string{"?", "?", "a", "esc", "p", "esc", "l"} {
				m.Update(keyMsg(k))
			}
			v := view(m)
			if lines := strings.Count(v, "\n") + 1; h > 0 && w > 0 && lines != h {
				t.Fatalf("%d×%d: view has %d lines", w, h, lines)
			}
			for _, l := range strings.Split(v, "\n") {
				if ansi.StringWidth(l) > w {
					t.Fatalf("%d×%d: line wider than the terminal: %q", w, h, l)
				}
			}
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 30, Height: 8})
	if !strings.Contains(view(m), "enlarge the terminal") {
		t.Errorf("tiny terminal: no notice:\n%s", view(m))
	}
}

func TestAlgorithmPickerChangesRacers(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	m.Update(keyMsg("a"))
	if m.screen != screenAlgorithms || !strings.Contains(view(m), "[x] FedAvg s=1") {
		t.Fatalf("a: screen %v\n%s", m.screen, view(m))
	}
	// Untick FedAvg s=1, tick FedAvg s=2, apply.
	id := m.runID
	for _, k := range []string{" ", "down", " ", "enter"} {
		m.Update(keyMsg(k))
	}
	var labels []string
	for _, r := range m.sc.Resolve() {
		labels = append(labels, r.Label)
	}
	if got, want := strings.Join(labels, "|"), "FedAvg s=2|FedAvg s=5|FedAvg s=10|FedProx"; got != want || m.runID == id {
		t.Fatalf("racers %q (restarted %v), want %q", got, m.runID != id, want)
	}
	// Unticking everything is refused with a message.
	m.Update(keyMsg("a"))
	for range m.picker.items {
		if m.picker.items[m.picker.cursor].checked {
			m.Update(keyMsg(" "))
		}
		m.Update(keyMsg("down"))
	}
	m.Update(keyMsg("enter"))
	if m.screen != screenAlgorithms || !strings.Contains(view(m), "pick at least one") {
		t.Fatalf("empty selection accepted:\n%s", view(m))
	}
	m.Update(keyMsg("esc"))
	if m.screen != screenRun || len(m.sc.Racers) != 4 {
		t.Fatalf("esc: screen %v, %d racers", m.screen, len(m.sc.Racers))
	}
}

func TestPresetPickerLoadsPreset(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	m.Update(keyMsg("p"))
	m.Update(keyMsg("down"))
	m.Update(keyMsg("enter"))
	if m.sc.Preset != "minibatch" || m.sc.Batch != 50 || m.screen != screenRun {
		t.Fatalf("preset %q batch %d screen %v", m.sc.Preset, m.sc.Batch, m.screen)
	}
}

func TestHelpOverlay(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	m.Update(keyMsg("?"))
	v := view(m)
	for _, want := range []string{"pause/resume", "η up", "local steps up", "heterogeneity Γ up", "export CSV", "log/linear y"} {
		if !strings.Contains(v, want) {
			t.Errorf("help lacks %q:\n%s", want, v)
		}
	}
	m.Update(keyMsg("q")) // closes the overlay, does not quit
	if m.screen != screenRun {
		t.Fatalf("q in help: screen %v", m.screen)
	}
	if _, cmd := m.Update(keyMsg("q")); cmd == nil {
		t.Fatal("q on the run view does not quit")
	}
}

func TestPauseStopsReadingTheStream(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	m.Update(keyMsg(" "))
	pt := experiment.Point{Round: algorithms.Round{Index: 1, GradNorm: 1, EstError: 1}}
	if _, cmd := m.Update(pointsMsg{runID: m.runID, points: []experiment.Point{pt}}); cmd != nil {
		// Only a frame tick may be scheduled; the stream must not be re-armed.
		if m.waiting {
			t.Fatal("paused model re-armed the stream")
		}
	}
	if !strings.Contains(view(m), "paused") {
		t.Errorf("status does not say paused:\n%s", view(m))
	}
	if _, cmd := m.Update(keyMsg(" ")); cmd == nil || !m.waiting {
		t.Fatal("resume did not re-arm the stream")
	}
}

func TestExportWritesANewFile(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	m := newTestModel(t, fakeRunner)
	drain(t, m, m.Init())
	for i, want := range []string{"fedscope-paradox-seed1.csv", "fedscope-paradox-seed1-2.csv"} {
		_, cmd := m.Update(keyMsg("e"))
		msg := cmd().(exportedMsg)
		m.Update(msg)
		if msg.err != nil || msg.path != want || msg.rows != 600 {
			t.Fatalf("export %d: %+v, want %s with 600 rows", i, msg, want)
		}
		data, err := os.ReadFile(want)
		if err != nil || !strings.HasPrefix(string(data), "algorithm,round,grad_norm,est_error") || strings.Count(string(data), "\n") != 601 {
			t.Fatalf("export %d: %v\n%.200s", i, err, data)
		}
	}
	if !strings.Contains(view(m), "exported 600 rows to fedscope-paradox-seed1-2.csv") {
		t.Errorf("no export notice:\n%s", view(m))
	}
}

func TestStreamStopsOnCancelWithoutLeaks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	started := make(chan struct{})
	ch := startStream(ctx, 1, func(ctx context.Context, sc experiment.Scenario, ready func(experiment.Facts), emit func(experiment.Point)) (experiment.Result, error) {
		once.Do(func() { close(started) })
		for i := 0; ; i++ { // an endless producer that is never read
			if ctx.Err() != nil {
				return experiment.Result{}, ctx.Err()
			}
			emit(experiment.Point{Round: algorithms.Round{Index: i}})
		}
	}, paradox(t))
	<-started
	cancel()
	deadline := time.After(2 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return // closed: the producer exited
			}
		case <-deadline:
			t.Fatal("producer did not stop after cancellation")
		}
	}
}

// TestReadyNoteIsShown: how the data's defaults were resolved (e.g. the
// bandwidth from the median distance) is shown once the data are ready.
func TestReadyNoteIsShown(t *testing.T) {
	m := newTestModel(t, blockingRunner)
	m.Init()
	f := experiment.NoFacts()
	f.Note = "bandwidth σ²=2.5 from the median pairwise distance 1.6"
	m.Update(readyMsg{runID: m.runID, facts: f})
	if !strings.Contains(view(m), f.Note) {
		t.Fatalf("note not shown:\n%s", view(m))
	}
}
