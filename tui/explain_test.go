package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/muesli/termenv"

	"github.com/fedscope/fedscope/experiment"
)

// TestStoryBesideTheCharts checks the story sits beside the charts from 100
// columns on, i hides it, and narrower terminals get it in the help.
func TestStoryBesideTheCharts(t *testing.T) {
	h := newHarness(t, small(t), WithPace(maxPace)).start()
	h.size(160, 48)
	h.tick(frameInterval)
	if !strings.Contains(h.screen(), "What to look for") || !strings.Contains(h.screen(), "centralised gradient descent") {
		t.Fatalf("no story at 160 columns:\n%s", h.screen())
	}
	h.key("i")
	if strings.Contains(h.screen(), "What to look for") {
		t.Fatal("i did not hide the story")
	}
	h.key("i")
	h.size(80, 24)
	if strings.Contains(h.screen(), "What to look for") {
		t.Fatal("the story squeezes the charts at 80 columns")
	}
	h.key("?")
	if !strings.Contains(h.screen(), "centralised gradient descent") {
		t.Fatalf("the help lacks the story at 80 columns:\n%s", h.screen())
	}
}

// TestEveryPresetTellsAStory checks every preset has a story of 3–6 lines
// at 80 columns that cites its paper.
func TestEveryPresetTellsAStory(t *testing.T) {
	for _, p := range catalog.Presets() {
		sc := p.Scenario()
		s := story(sc)
		lines := strings.Count(wrapText(s, 80), "\n") + 1
		if s == "" || lines < 3 || lines > 6 || !strings.Contains(s, "paper 00") {
			t.Errorf("%s: story of %d lines at 80 columns: %q", p.Name, lines, s)
		}
	}
}

func wrapText(s string, w int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if len([]rune(line))+1+len([]rune(word)) > w && line != "" {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}

// TestAnnotationAppearsWhenItBecomesTrue streams a race whose racer 1
// plateaus from round 20 and checks the label "… stalls" appears only once
// the rounds revealed show the plateau (condition: < 1 % change over 10
// rounds), never before; racer 0 (s=1) never gets it.
func TestAnnotationAppearsWhenItBecomesTrue(t *testing.T) {
	vals := func(i, tr int) []float64 {
		g := 10 * math.Pow(0.7, float64(tr))
		if i == 1 {
			g = 10*math.Pow(0.7, float64(min(tr, 20))) + 0.001*math.Pow(0.999, float64(tr))
		}
		return []float64{g, 1, math.NaN(), 0.5}
	}
	sc := small(t, "rounds=60")
	h := newHarness(t, sc, WithRunner(streamRunner{vals: vals}.run), WithPace(1))
	h.size(160, 48)
	h.start()
	label := "s=5 stalls: not stationary"
	for step := 1; step <= 60; step++ {
		h.tick(time.Second)
		shown := strings.Contains(h.screen(), label)
		// Round 20 + window 10 is the first round whose relative change
		// over the window is below 1 %.
		if due := step >= 30; shown != due {
			t.Fatalf("after %d rounds revealed the label is shown=%v, want %v:\n%s", step, shown, due, h.screen())
		}
	}
	if strings.Contains(h.screen(), "s=1 stalls") {
		t.Error("FedAvg s=1 is gradient descent; it never stalls")
	}
}

// relativeLuminance and contrast follow WCAG 2.1.
func relativeLuminance(hex string) float64 {
	c := func(s string) float64 {
		v, _ := strconv.ParseUint(s, 16, 8)
		x := float64(v) / 255
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*c(hex[1:3]) + 0.7152*c(hex[3:5]) + 0.0722*c(hex[5:7])
}

func contrast(a, b string) float64 {
	la, lb := relativeLuminance(a), relativeLuminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestThemeContrast computes the contrast of every colour of every theme
// against its background: text at least 4.5:1, racers and clusters 3:1.
func TestThemeContrast(t *testing.T) {
	for _, th := range themes {
		if th.name == "mono" {
			continue
		}
		for name, c := range map[string]string{"text": th.text, "muted": th.muted, "accent": th.accent,
			"error": th.errorText, "notice": th.notice, "axis": th.axis} {
			if r := contrast(c, th.background); r < 4.5 {
				t.Errorf("%s: %s %s is %.2f:1 on %s, want ≥ 4.5", th.name, name, c, r, th.background)
			}
		}
		for i, c := range th.racers {
			if r := contrast(c, th.background); r < 3 {
				t.Errorf("%s: racer %d %s is %.2f:1, want ≥ 3", th.name, i, c, r)
			}
		}
		for i, c := range th.clusters {
			if r := contrast(c, th.background); r < 3 {
				t.Errorf("%s: cluster %d %s is %.2f:1, want ≥ 3", th.name, i, c, r)
			}
		}
	}
}

// TestThemeKeyCycles checks T cycles the themes live.
func TestThemeKeyCycles(t *testing.T) {
	h := newHarness(t, small(t), WithProfile(termenv.ANSI256), WithTheme("dark"))
	h.m.Init()
	var seen []string
	for range themes {
		h.press("T")
		seen = append(seen, themes[h.m.c.theme].name)
	}
	if strings.Join(seen, ",") != "light,mono,dark" {
		t.Errorf("T cycles %v", seen)
	}
	if !strings.Contains(h.screen(), "theme: dark") {
		t.Errorf("no notice:\n%s", h.screen())
	}
}

// parseCommand reads a command line of `y` back into a scenario the way the
// command line does (cli): the preset, the early assignments,
// --rounds and --seed, then the others.
func parseCommand(t *testing.T, line string) experiment.Scenario {
	t.Helper()
	fields := strings.Fields(strings.TrimPrefix(line, "fedscope "))
	var presetName string
	var sets []string
	rounds, seed := -1, int64(-1)
	for i := 0; i+1 < len(fields); i += 2 {
		v := strings.Trim(fields[i+1], "'")
		switch fields[i] {
		case "--preset":
			presetName = v
		case "--set":
			sets = append(sets, v)
		case "--rounds":
			rounds, _ = strconv.Atoi(v)
		case "--seed":
			seed, _ = strconv.ParseInt(v, 10, 64)
		case "--pace":
		default:
			t.Fatalf("unexpected argument %q in %q", fields[i], line)
		}
	}
	p, err := catalog.Lookup(presetName)
	if err != nil {
		t.Fatal(err)
	}
	sc, rest, err := catalog.ApplyEarly(p.Scenario(), sets)
	if err != nil {
		t.Fatal(err)
	}
	if rounds >= 0 {
		sc.Rounds = rounds
	}
	if seed >= 0 {
		sc.Seed = uint64(seed)
	}
	sc, err = catalog.Apply(sc, rest)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return sc
}

func equalScenario(a, b experiment.Scenario) bool {
	return a.Preset == b.Preset && a.Rounds == b.Rounds && a.Seed == b.Seed && a.Trials == b.Trials &&
		reflect.DeepEqual(a.Config, b.Config) && a.Sweep.Knob == b.Sweep.Knob
}

// TestCommandLineReproducesTheScreen checks y shows a command line that,
// read back, gives the scenario on screen — after live keys, a racer change
// and on a data file.
func TestCommandLineReproducesTheScreen(t *testing.T) {
	for _, keys := range [][]string{nil, {"]", "+", "H", "n"}, {"o", "o", "b"}} {
		h := stalled(t, preset(t, "paradox"))
		for _, k := range keys {
			h.press(k)
		}
		h.press("y")
		line := strings.ReplaceAll(h.m.c.notice, "\u00a0", " ")
		if !strings.HasPrefix(line, "fedscope --preset paradox") {
			t.Fatalf("y shows %q", line)
		}
		if got := parseCommand(t, line); !equalScenario(got, h.m.v.scenario()) {
			t.Errorf("keys %v: %q reads back as a different scenario", keys, line)
		}
	}
	for _, sets := range [][]string{{"algorithms=fedavg:s=2,fedprox:eta=0.3", "gamma=0.5", "rounds=40"},
		{"data=../shared/data/pendigits.scale", "rff_dim=50", "clients=4"}} {
		if strings.HasPrefix(sets[0], "data=") {
			if _, err := os.Stat("../../shared/data/pendigits.scale"); err != nil {
				t.Log("skipping the data-file case: ../shared/data/pendigits.scale is absent")
				continue
			}
			sets[0] = "data=../../shared/data/pendigits.scale"
		}
		sc := preset(t, "paradox", sets...)
		line := NewModel(context.Background(), catalog, experiment.NewEngine(), sc, WithProfile(termenv.Ascii)).commandLine()
		if got := parseCommand(t, line); !equalScenario(got, sc) {
			t.Errorf("%v: %q reads back as a different scenario", sets, line)
		}
	}
}

// TestSidecarRoundTrips checks an export's sidecar carries a command that
// reproduces the exported scenario, the version and every key.
func TestSidecarRoundTrips(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	h := newHarness(t, small(t, "local_steps=4"), WithPace(maxPace), WithVersion("v1.2")).start()
	h.tick(frameInterval)
	_, cmd := h.m.Update(keyMsg("e"))
	msg := cmd().(exportedMsg)
	b, err := os.ReadFile(msg.sidecar)
	if err != nil {
		t.Fatal(err)
	}
	var side struct {
		Command, Version string
		Partial          bool
		Knobs            map[string]string
	}
	if err := json.Unmarshal(b, &side); err != nil {
		t.Fatal(err)
	}
	sc := h.m.v.scenario()
	if side.Version != "v1.2" || side.Partial || !equalScenario(parseCommand(t, side.Command), sc) {
		t.Errorf("sidecar %+v does not reproduce the scenario", side)
	}
	for _, k := range sc.Knobs() {
		if side.Knobs[k.Name] != k.Get(sc) {
			t.Errorf("sidecar knob %s=%q, scenario %q", k.Name, side.Knobs[k.Name], k.Get(sc))
		}
	}
}

// TestEveryListedKeyActs presses every key the help lists, on a race
// mid-way with the cursor placed, and checks each changes something (the
// scenario, the drawing, an overlay) or says something — never "does
// nothing". The help and the dispatch read one table, so they cannot
// disagree.
func TestEveryListedKeyActs(t *testing.T) {
	for _, name := range []string{"paradox", "lowrank", "mixture", "fedavg-bound", "polynomial"} {
		sc := preset(t, name)
		fresh := func() *harness {
			h := stalled(t, sc)
			h.m.Init()
			if r := h.race(); r != nil {
				for k := 1; k <= 10; k++ {
					for i := range r.specs {
						vals := make([]float64, len(r.table.Metrics))
						for m := range vals {
							vals[m] = float64(k)
						}
						r.table.Add(experiment.Point{Racer: i, Round: experiment.Round{Index: k, Values: vals}})
					}
				}
				r.state, r.revealed = stateRunning, 10
				r.moveCursor(5)
			}
			return h
		}
		_, acts := fresh().m.v.help()
		acts = append(acts, fresh().m.globalActions()...)
		for _, a := range acts {
			if a.help == "" {
				continue
			}
			h := fresh()
			before := snapshot(h)
			cmd := h.press(a.keys[0])
			after := snapshot(h)
			if strings.Contains(h.m.c.notice, "does nothing") {
				t.Errorf("%s: %s (%s) says it does nothing", name, a.name(), a.help)
			}
			if before == after && cmd == nil {
				t.Errorf("%s: %s (%s) changed nothing", name, a.name(), a.help)
			}
		}
	}
}

// snapshot is everything a key may change.
func snapshot(h *harness) string {
	v := 0
	switch x := h.m.v.(type) {
	case *runView:
		v = x.version + 1000*x.chart
	case *clusterView:
		v = x.version + 1000*x.racer
	case *sweepView:
		v = x.version
	}
	return strconv.Itoa(v) + "|" + strconv.Itoa(h.m.c.version-0) + "|" + strconv.Itoa(int(h.m.screen)) + "|" +
		h.m.commandLine() + "|" + h.m.c.notice + "|" + strconv.FormatBool(h.m.c.logY)
}

// TestHelpScrolls: on every preset at 80×24 the help is taller than the
// terminal; scrolling down reaches every key the view lists, each line
// of the help is shown on some page, and the footer says where one is.
func TestHelpScrolls(t *testing.T) {
	for _, p := range catalog.Presets() {
		h := newHarness(t, p.Scenario(), WithRunner(blockingRunner), WithSweepRunner(func(ctx context.Context, _ experiment.Scenario, _ func(experiment.TrialResult)) error {
			<-ctx.Done()
			return ctx.Err()
		}))
		h.m.Init()
		h.size(80, 24)
		h.key("?")
		first := h.screen()
		if !strings.HasPrefix(first, "Help · "+p.Name) {
			t.Fatalf("%s: help starts %q", p.Name, first[:min(len(first), 40)])
		}
		seen := first
		for i := 0; i < 10; i++ {
			h.key("pgdown")
			seen += h.screen()
		}
		h.key("end")
		seen += h.screen()
		for _, k := range h.m.actions() {
			if k.help != "" && !strings.Contains(seen, k.help[:min(len(k.help), 30)]) {
				t.Errorf("%s: the help never shows %q (%s)", p.Name, k.name(), k.help)
			}
		}
		if foot := lastLine(h.screen()); !strings.Contains(foot, "esc") {
			t.Errorf("%s: last line %q does not say how to close", p.Name, foot)
		}
		h.key("home")
		if h.screen() != first {
			t.Errorf("%s: home does not return to the top", p.Name)
		}
		h.key("esc")
		if strings.HasPrefix(h.screen(), "Help ·") {
			t.Errorf("%s: esc did not close the help", p.Name)
		}
	}
}

func lastLine(s string) string { return s[strings.LastIndex(s, "\n")+1:] }

// TestNoPlateauBeforeTheCurveMoves: a racer flat from the start (FedLRGD's
// set-up epochs) does not "stall"; it does once it has descended and
// flattened.
func TestNoPlateauBeforeTheCurveMoves(t *testing.T) {
	vals := func(i, tr int) []float64 {
		g := 10 * math.Pow(0.7, float64(tr))
		if i == 1 { // flat for 30 rounds, then descends to a floor at round 50
			g = 5 * math.Pow(0.7, float64(min(max(tr-30, 0), 20)))
		}
		return []float64{g, 1, math.NaN(), 0.5}
	}
	sc := small(t, "rounds=80")
	h := newHarness(t, sc, WithRunner(streamRunner{vals: vals}.run), WithPace(1))
	h.size(160, 48)
	h.start()
	label := "s=5 stalls: not stationary"
	for step := 1; step <= 80; step++ {
		h.tick(time.Second)
		// The floor starts at round 50; the window is 10 rounds.
		if shown, due := strings.Contains(h.screen(), label), step >= 60; shown != due {
			t.Fatalf("after %d rounds revealed the label is shown=%v, want %v", step, shown, due)
		}
	}
}

// TestStoppedRacerReadsItsLastRound: a racer that stopped early shows its
// last values and the round it stopped at, not a dash.
func TestStoppedRacerReadsItsLastRound(t *testing.T) {
	sc := small(t, "rounds=40")
	h := newHarness(t, sc, WithRunner(streamRunner{vals: paradoxValues, stop: map[int]int{2: 5}}.run), WithPace(MaxPace))
	h.size(160, 48)
	h.start()
	h.tick(time.Second)
	screen := strings.Join(strings.Fields(h.screen()), " ")
	last := paradoxValues(2, 5)
	want := fmt.Sprintf("FedAvg s=10 %s %s stopped at round 5", formatValue(last[0]), formatValue(last[1]))
	if !strings.Contains(screen, want) {
		t.Errorf("legend lacks %q:\n%s", want, h.screen())
	}
}
