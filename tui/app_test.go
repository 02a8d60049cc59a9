package tui

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/internal/slowtest"
)

// stalled starts a harness whose runner never emits (Init's blocking read
// is not executed).
func stalled(t *testing.T, sc experiment.Scenario) *harness {
	h := newHarness(t, sc, WithRunner(blockingRunner))
	h.m.Init()
	return h
}

// press sends a key without executing its commands (a restart's blocking
// read would wait forever on a stalled runner).
func (h *harness) press(k string) tea.Cmd { _, cmd := h.m.Update(keyMsg(k)); return cmd }

func TestStaleRunMessagesAreIgnored(t *testing.T) {
	h := stalled(t, small(t))
	r := h.race()
	old := r.runID
	h.press("r") // restart: a new run id
	if r.runID == old {
		t.Fatalf("restart kept run id %d", old)
	}
	pt := experiment.Point{Racer: 0, Round: experiment.Round{Index: 1, Values: paradoxValues(0, 1)}}
	if _, cmd := h.m.Update(pointsMsg{runID: old, points: []experiment.Point{pt}}); cmd != nil || r.table.Len() != 0 {
		t.Fatalf("stale points were recorded (rows %d) or re-armed the stream", r.table.Len())
	}
	h.m.Update(readyMsg{runID: old, facts: experiment.Facts{Summary: "stale"}})
	if r.facts.Summary == "stale" {
		t.Fatal("a stale readyMsg replaced the facts")
	}
	h.m.Update(runDoneMsg{runID: old, err: errors.New("boom")})
	if r.state == stateFailed || r.state == stateDone {
		t.Fatalf("a stale runDoneMsg ended the current run: state %v", r.state)
	}
	h.m.Update(pointsMsg{runID: r.runID, points: []experiment.Point{pt}})
	if r.table.Len() != 1 {
		t.Fatalf("current points: %d rows", r.table.Len())
	}
}

func TestParameterKeysChangeTheScenarioAndRestart(t *testing.T) {
	for _, test := range []struct {
		keys, key, want string
	}{
		{"]", "eta", "0.15"}, {"[", "eta", "0.07"}, {"+", "local_steps", "12"}, {"=", "local_steps", "12"},
		{"-", "local_steps", "9"}, {"H", "gamma", "0.01"}, {"HHh", "gamma", "0.01"}, {"h", "gamma", "0"},
		{"n", "seed", "2"}, {"b", "batch", "25"}, {"bbB", "batch", "25"}, {"bB", "batch", "0"},
		{"o", "subspace_dim", "7"}, {"oO", "subspace_dim", "0"},
	} {
		h := stalled(t, small(t))
		id := h.race().runID
		for _, k := range test.keys {
			h.press(string(k))
		}
		sc := h.m.v.scenario()
		if got := sc.Get(test.key); got != test.want {
			t.Errorf("keys %q: %s=%s, want %s", test.keys, test.key, got, test.want)
		}
		if h.race().runID == id && test.keys != "h" {
			t.Errorf("keys %q did not restart the run", test.keys)
		}
	}
}

// TestSubspaceRescalesEta checks o moves r and η together (E000-4: η ∝ r/d)
// and back exactly.
func TestSubspaceRescalesEta(t *testing.T) {
	h := stalled(t, preset(t, "paradox"))
	h.press("o")
	sc := h.m.v.scenario()
	if sc.Get("subspace_dim") != "70" || sc.Get("eta") != "0.07" {
		t.Errorf("o: r=%s η=%s, want 70 and 0.07", sc.Get("subspace_dim"), sc.Get("eta"))
	}
	h.press("O")
	sc = h.m.v.scenario()
	if sc.Get("subspace_dim") != "0" || sc.Get("eta") != "0.1" {
		t.Errorf("oO: r=%s η=%s, want 0 (= d) and 0.1", sc.Get("subspace_dim"), sc.Get("eta"))
	}
}

func TestLogToggleDoesNotRestart(t *testing.T) {
	h := stalled(t, small(t))
	id := h.race().runID
	h.press("l")
	if h.m.c.logY || h.race().runID != id {
		t.Fatalf("l: logY=%v, run id %d→%d; want linear without a restart", h.m.c.logY, id, h.race().runID)
	}
	h.m.Update(readyMsg{runID: id, facts: h.race().facts})
	h.m.Update(pointsMsg{runID: id, points: []experiment.Point{{Round: experiment.Round{Index: 1, Values: paradoxValues(0, 1)}}}})
	h.tick(frameInterval * 100)
	if !strings.Contains(h.screen(), "(linear)") {
		t.Fatalf("the caption does not say linear:\n%s", h.screen())
	}
}

func TestFullRun(t *testing.T) {
	h := newHarness(t, small(t), WithPace(maxPace)).start()
	h.size(80, 24)
	h.tick(frameInterval)
	screen := h.screen()
	for _, want := range []string{"round 150/150", "done", "FedAvg s=1", "FedAvg s=5", "FedAvg s=10", "FedProx", "gradient norm"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if got := h.race().table.Len(); got != 4*151 {
		t.Errorf("the table has %d rows, want 604 (rounds 0..150)", got)
	}
	if !strings.Contains(screen, "‖θ−θ*‖ (log") {
		t.Errorf("80×24 does not show both charts:\n%s", screen)
	}
	h.size(80, 16)
	if strings.Contains(h.screen(), "‖θ−θ*‖ (log") || !strings.Contains(h.screen(), "tab: next chart (1/2)") {
		t.Errorf("80×16 shows both charts, or does not say how to switch:\n%s", h.screen())
	}
	h.key("tab")
	if !strings.Contains(h.screen(), "pooled least squares") || !strings.Contains(h.screen(), "tab: next chart (2/2)") {
		t.Errorf("tab did not switch to the error chart:\n%s", h.screen())
	}
}

func TestDivergenceIsASentenceNotACrash(t *testing.T) {
	h := stalled(t, small(t))
	r := h.race()
	racers := h.m.v.scenario().Racers()
	errs := make([]error, len(racers))
	errs[2] = &experiment.RacerError{Label: "FedAvg s=10", Err: &algorithms.DivergedError{Round: 7, Eta: 1.2, Limit: 0.95, Of: "the local Hessians"}}
	errs[1] = &experiment.RacerError{Label: "FedAvg s=5", Err: &algorithms.DivergedError{Round: 9, Eta: 1.2, Limit: 0.95, Of: "the local Hessians"}}
	h.m.Update(runDoneMsg{runID: r.runID, res: experiment.Result{Racers: racers, Errs: errs}})
	screen := strings.ReplaceAll(h.screen(), "\n", " ")
	for _, want := range []string{"diverged", "FedAvg s=5 diverged at round 9: η=1.2 exceeds the stable limit 0.95", "also diverged: FedAvg s=10 (round 7)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, h.screen())
		}
	}
}

// TestRealDivergence runs η above the stable limit for real: the racers
// that diverge say so with the limit, the others finish.
func TestRealDivergence(t *testing.T) {
	h := newHarness(t, small(t, "eta=3", "rounds=30"), WithPace(maxPace)).start()
	h.tick(frameInterval)
	screen := strings.ReplaceAll(h.screen(), "\n", " ")
	if !strings.Contains(screen, "diverged at round") || !strings.Contains(screen, "exceeds the stable limit") {
		t.Errorf("no divergence sentence:\n%s", h.screen())
	}
}

func TestNoPanicAtAnySize(t *testing.T) {
	slowtest.Skip(t)
	for _, name := range []string{"paradox", "mixture", "fedgain-model", "lowrank", "fedavg-bound"} {
		sc := preset(t, name)
		h := newHarness(t, sc, WithRunner(blockingRunner), WithSweepRunner(func(ctx context.Context, _ experiment.Scenario, _ func(experiment.TrialResult)) error {
			<-ctx.Done()
			return ctx.Err()
		}))
		h.m.Init()
		for w := 0; w <= 170; w += 13 {
			for ht := 0; ht <= 50; ht += 5 {
				h.size(w, ht)
				for _, k := range []string{"?", "?", "p", "esc", "l", "i", "t", "z"} {
					h.press(k)
				}
				v := h.m.View()
				if lines := strings.Count(v, "\n") + 1; ht > 0 && w > 0 && lines != ht {
					t.Fatalf("%s %d×%d: %d lines", name, w, ht, lines)
				}
				for _, l := range strings.Split(v, "\n") {
					if ansi.StringWidth(l) > w {
						t.Fatalf("%s %d×%d: a line wider than the terminal: %q", name, w, ht, l)
					}
				}
			}
		}
		h.size(30, 8)
		if !strings.Contains(h.screen(), "enlarge the terminal") {
			t.Errorf("%s: a tiny terminal gets no notice:\n%s", name, h.screen())
		}
	}
}

func TestAlgorithmPickerChangesRacers(t *testing.T) {
	h := stalled(t, small(t))
	h.press("a")
	if h.m.screen != screenAlgorithms || !strings.Contains(h.screen(), "[x] FedAvg s=1") {
		t.Fatalf("a: screen %v\n%s", h.m.screen, h.screen())
	}
	id := h.race().runID
	// Untick FedAvg s=1, tick FedAvg s=2, apply.
	for _, k := range []string{" ", "down", " ", "enter"} {
		h.press(k)
	}
	got := strings.Join(h.m.v.scenario().Labels(), "|")
	if want := "FedAvg s=2|FedAvg s=5|FedAvg s=10|FedProx"; got != want || h.race().runID == id {
		t.Fatalf("racers %q (restarted %v), want %q", got, h.race().runID != id, want)
	}
	// Unticking everything is refused with a message.
	h.press("a")
	for range h.m.picker.items {
		if h.m.picker.items[h.m.picker.cursor].checked {
			h.press(" ")
		}
		h.press("down")
	}
	h.press("enter")
	if h.m.screen != screenAlgorithms || !strings.Contains(h.screen(), "pick at least one") {
		t.Fatalf("an empty selection was accepted:\n%s", h.screen())
	}
	h.press("esc")
	if h.m.screen != screenView || len(h.m.v.scenario().Racers()) != 4 {
		t.Fatalf("esc: screen %v, %d racers", h.m.screen, len(h.m.v.scenario().Racers()))
	}
}

func TestPresetPickerLoadsPreset(t *testing.T) {
	h := stalled(t, small(t))
	h.press("p")
	h.press("down")
	h.press("enter")
	if sc := h.m.v.scenario(); sc.Preset != "minibatch" || sc.Get("batch") != "50" || h.m.screen != screenView {
		t.Fatalf("preset %q batch %s screen %v", sc.Preset, sc.Get("batch"), h.m.screen)
	}
}

// TestHelpListsOnlyWhatActs checks the help of each view lists the keys that
// act there: η on the paradox, no η on lowrank (which has no step size), the
// cluster key on the mixture; q closes the help without quitting.
func TestHelpListsOnlyWhatActs(t *testing.T) {
	for _, test := range []struct {
		preset       string
		want, absent []string
	}{
		{"paradox", []string{"pause / resume", "step size η down / up", "local steps s down / up", "heterogeneity Γ down / up",
			"export", "log / linear", "show / hide racer", "zoom", "stationary-point paradox"}, []string{"assignments of the next racer"}},
		{"lowrank", []string{"FedLRGD rank r down / up", "x axis"}, []string{"step size η", "heterogeneity Γ"}},
		{"mixture", []string{"separation Δ down / up"}, []string{"heterogeneity Γ", "minibatch"}},
	} {
		h := stalled(t, preset(t, test.preset))
		h.size(160, 48)
		h.press("?")
		screen := h.screen()
		for _, want := range test.want {
			if !strings.Contains(screen, want) {
				t.Errorf("%s: help lacks %q:\n%s", test.preset, want, screen)
			}
		}
		for _, no := range test.absent {
			if strings.Contains(screen, no) {
				t.Errorf("%s: help lists %q, which does not act here", test.preset, no)
			}
		}
		h.press("q") // closes the overlay, does not quit
		if h.m.screen != screenView {
			t.Fatalf("%s: q in help left screen %v", test.preset, h.m.screen)
		}
	}
}

// TestKeysThatDoNotActSaySo checks a key of another view does nothing but
// says so, instead of restarting silently.
func TestKeysThatDoNotActSaySo(t *testing.T) {
	h := stalled(t, preset(t, "lowrank"))
	id := h.race().runID
	h.press("]")
	if h.race().runID != id {
		t.Error("] restarted lowrank, which has no step size η")
	}
	if !strings.Contains(h.screen(), "] does nothing on this view") {
		t.Errorf("no notice:\n%s", h.screen())
	}
}

func TestPauseStopsTheReveal(t *testing.T) {
	h := newHarness(t, small(t), WithPace(10)).start()
	h.key(" ")
	h.tick(10 * frameInterval)
	// Paused, round 0 is drawn (never a blank screen), and no round more.
	if h.race().revealed != 1 || !strings.Contains(h.screen(), "round 0/150") || !strings.Contains(h.screen(), "paused · space plays") {
		t.Errorf("paused: %d revealed, status %q", h.race().revealed, statusOf(h.screen()))
	}
}

func TestExportWritesNewFilesWithASidecar(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	h := newHarness(t, small(t, "eta=0.2"), WithPace(maxPace), WithVersion("v9")).start()
	h.tick(frameInterval)
	base := "fedscope-paradox-seed1-eta0.2-clients5-dim10-samples40"
	for i, want := range []string{base + ".csv", base + "-2.csv"} {
		_, cmd := h.m.Update(keyMsg("e"))
		msg := cmd().(exportedMsg)
		h.m.Update(msg)
		if msg.err != nil || msg.path != want || msg.rows != 604 || msg.partial {
			t.Fatalf("export %d: %+v, want %s with 604 rows, complete", i, msg, want)
		}
		data, err := os.ReadFile(want)
		if err != nil || !strings.HasPrefix(string(data), "algorithm,round,grad_norm,est_error") || strings.Count(string(data), "\n") != 605 {
			t.Fatalf("export %d: %v\n%.200s", i, err, data)
		}
		side, err := os.ReadFile(strings.TrimSuffix(want, ".csv") + ".json")
		if err != nil || !strings.Contains(string(side), `"command": "fedscope --preset paradox --set eta=0.2 --set clients=5 --set dim=10 --set samples=40`) ||
			!strings.Contains(string(side), `"version": "v9"`) {
			t.Fatalf("sidecar %d: %v\n%s", i, err, side)
		}
	}
	if !strings.Contains(h.screen(), "exported 604 rows to "+base+"-2.csv") {
		t.Errorf("no export notice:\n%s", h.screen())
	}
}

func TestPartialExportSaysSo(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	h := newHarness(t, small(t), WithPace(10)).start()
	h.tick(1e9) // one second: round 0 and 10 rounds revealed
	_, cmd := h.m.Update(keyMsg("e"))
	msg := cmd().(exportedMsg)
	if !msg.partial || msg.rows != 44 || !strings.Contains(msg.notice(), "partial") {
		t.Fatalf("mid-run export: %+v (%s)", msg, msg.notice())
	}
}

func TestStreamStopsOnCancelWithoutLeaks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	started := make(chan struct{})
	ch := startStream(ctx, 1, func(ctx context.Context, sc experiment.Scenario, obs experiment.Observer) (experiment.Result, error) {
		once.Do(func() { close(started) })
		for i := 0; ; i++ { // an endless producer that is never read
			if ctx.Err() != nil {
				return experiment.Result{}, ctx.Err()
			}
			obs.Round(experiment.Point{Round: experiment.Round{Index: i}})
		}
	}, small(t))
	<-started
	cancel()
	for range ch { // returns once the producer closed the channel
	}
}

// TestReadyNoteIsShown: how the data's defaults were resolved (e.g. the
// bandwidth from the median distance) is shown once the data are ready.
func TestReadyNoteIsShown(t *testing.T) {
	h := stalled(t, small(t))
	note := "bandwidth σ²=2.5 from the median pairwise distance 1.6"
	h.m.Update(readyMsg{runID: h.race().runID, facts: experiment.Facts{Summary: "s", Notes: []string{note}}})
	if !strings.Contains(h.screen(), note) {
		t.Fatalf("note not shown:\n%s", h.screen())
	}
}

// TestQuitPrintsTheCommandLine checks that quitting after a change hands the
// command line of the final state to the caller, and nothing otherwise.
func TestQuitPrintsTheCommandLine(t *testing.T) {
	var got []string
	h := newHarness(t, preset(t, "paradox"), WithRunner(blockingRunner), WithExitLine(func(s string) { got = append(got, s) }))
	h.m.Init()
	h.press("q")
	if len(got) != 0 {
		t.Fatalf("unchanged state printed %q", got)
	}
	h = newHarness(t, preset(t, "paradox"), WithRunner(blockingRunner), WithExitLine(func(s string) { got = append(got, s) }))
	h.m.Init()
	h.press("]")
	h.press("q")
	if len(got) != 1 || got[0] != "fedscope --preset paradox --set eta=0.15" {
		t.Fatalf("exit line %q", got)
	}
}

// TestNoticeAtStart: a notice given at start (a setting that changes
// nothing) is on screen until the first key.
func TestNoticeAtStart(t *testing.T) {
	h := newHarness(t, small(t), WithNotice("warning: batch_norm=batch has no effect")).start()
	h.tick(frameInterval)
	if !strings.Contains(h.screen(), "batch_norm=batch has no effect") {
		t.Fatalf("the notice is not on screen:\n%s", h.screen())
	}
	h.key("l")
	if strings.Contains(h.screen(), "batch_norm=batch has no effect") {
		t.Errorf("the notice outlived the first key:\n%s", h.screen())
	}
}
