package tui

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/internal/slowtest"
	"github.com/muesli/termenv"
)

// goldenSizes are the terminal sizes every screen is designed for: a talk's
// projector first (80×24, 100×30), then a laptop and a large screen.
var goldenSizes = [][2]int{{80, 24}, {100, 30}, {120, 36}, {160, 48}}

// TestGoldenParadox draws the paradox mid-run — round 0 at once, then 60
// rounds at 10 rounds/s after 6 s, the real computation — and compares
// with testdata/*.golden (regenerate with -update).
func TestGoldenParadox(t *testing.T) {
	for _, size := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			h := newHarness(t, preset(t, "paradox"), WithPace(10)).start()
			h.size(size[0], size[1])
			for i := 0; i < 60; i++ {
				h.tick(100 * time.Millisecond)
			}
			if r := h.race(); r.revealed != 61 { // round 0 at once, then rounds 1..60
				t.Fatalf("%d rows revealed, want 61", r.revealed)
			}
			golden.RequireEqual(t, []byte(h.screen()))
		})
	}
}

// TestGoldenScreens draws every preset's finished screen at every design
// size: the run and cluster views from the real computation, the sweeps
// from a scripted one (the real sweeps take minutes; their layout is what
// is compared here). Regenerate with -update and look at them.
func TestGoldenScreens(t *testing.T) {
	slowtest.Skip(t)
	for _, p := range catalog.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			h := finished(t, p.Name)
			for _, size := range goldenSizes {
				t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
					h.size(size[0], size[1])
					screen := h.screen()
					if strings.Contains(screen, "enlarge the terminal") {
						t.Fatalf("%v is too small for %s", size, p.Name)
					}
					golden.RequireEqual(t, []byte(screen))
				})
			}
		})
	}
}

// TestGoldenLesson draws the paradox lesson at step 1 (round 0, paused) and
// at its last step's stop.
func TestGoldenLesson(t *testing.T) {
	files := catalog.Lessons()
	i := slices.IndexFunc(files, func(f experiment.LessonFile) bool { return f.Name == "paradox" })
	if i < 0 {
		t.Fatal("no built-in lesson paradox")
	}
	l := resolveLesson(t, files[i])
	for _, step := range []int{1, len(l.Steps)} {
		h := newHarness(t, l.Steps[step-1].Scenario, WithLesson(l, step), WithPace(maxPace)).start()
		h.tick(frameInterval)
		if step > 1 {
			h.key("pgdown")
			for i := 0; i < 10; i++ {
				h.tick(frameInterval)
			}
			if r := h.race(); !r.holding() {
				t.Fatalf("step %d did not reach its stop: row %d of %d", step, r.revealed, r.positions())
			}
		}
		for _, size := range goldenSizes {
			t.Run(fmt.Sprintf("step%d-%dx%d", step, size[0], size[1]), func(t *testing.T) {
				h.size(size[0], size[1])
				golden.RequireEqual(t, []byte(h.screen()))
			})
		}
	}
}

// TestAnnotationsSitOnTheirCurves: on every run preset's finished screen at
// 100×30 (and the other design sizes), every annotation drawn lies within
// one row of its own racer's curve in each column it covers (or past the
// curve's head, next to it), and every other racer's curve is farther; the
// label's text is on the screen row the geometry says.
func TestAnnotationsSitOnTheirCurves(t *testing.T) {
	for _, p := range catalog.Presets() {
		if p.Scenario().IsSweep() {
			continue
		}
		h := finished(t, p.Name)
		for _, size := range goldenSizes {
			h.size(size[0], size[1])
			screen := h.screen()
			v := runViewOf(h)
			placed := 0
			for m, g := range v.geoms {
				for _, l := range g.Placed {
					placed++
					own := g.Spans[l.Racer]
					end := lastDrawn(own)
					for x := l.From; x <= l.To; x++ {
						d := rowsFrom(l.Row, own[min(x, end)])
						if d > 1 {
							t.Errorf("%s %v, metric %d: %q on row %d is %d rows from its curve at column %d", p.Name, size, m, l.Text, l.Row, d, x)
						}
						for r, sp := range g.Spans {
							if r != l.Racer && x <= lastDrawn(sp) && rowsFrom(l.Row, sp[x]) <= d {
								t.Errorf("%s %v: %q is as near to racer %d's curve at column %d", p.Name, size, l.Text, r+1, x)
							}
						}
					}
				}
			}
			if placed == 0 && p.Name == "paradox" && size[0] >= 100 {
				t.Errorf("%s %v: no annotation drawn:\n%s", p.Name, size, screen)
			}
		}
	}
}

// finishedRuns are the presets computed to the end, once for all the tests
// that look at finished screens (the computations take most of their time).
var finishedRuns = map[string]*harness{}

// finished returns the preset's harness with every round revealed (a sweep
// scripted with 3 trials), computed once per test binary.
func finished(t *testing.T, name string) *harness {
	t.Helper()
	if h, ok := finishedRuns[name]; ok {
		h.t = t
		return h
	}
	sc := preset(t, name)
	if sc.IsSweep() {
		sc.Trials = 3
	}
	h := &harness{t: t, clock: newClock()}
	h.m = NewModel(context.Background(), catalog, experiment.NewEngine(), sc, WithProfile(termenv.Ascii), WithTheme("mono"),
		WithClock(h.clock.now), WithTicker(noTick), WithOutput(io.Discard), WithPace(maxPace), WithSweepRunner(fakeSweep))
	h.start()
	h.tick(frameInterval)
	if v, ok := h.m.v.(*sweepView); ok {
		h.exec(func() tea.Msg { return sweepFrameMsg{v.runID} })
	}
	finishedRuns[name] = h
	return h
}

// runViewOf is the run view of a run or cluster view.
func runViewOf(h *harness) *runView {
	switch v := h.m.v.(type) {
	case *runView:
		return v
	case *clusterView:
		return &v.runView
	}
	return nil
}

// lastDrawn is the last column where a curve is drawn (−1: none).
func lastDrawn(span [][2]int) int {
	for x := len(span) - 1; x >= 0; x-- {
		if span[x][0] <= span[x][1] {
			return x
		}
	}
	return -1
}

// rowsFrom is how many rows r lies from the rows a curve covers in a column.
func rowsFrom(r int, span [2]int) int {
	switch {
	case span[0] > span[1]:
		return 1 << 20
	case r < span[0]:
		return span[0] - r
	case r > span[1]:
		return r - span[1]
	}
	return 0
}

// TestFinishedRacersEndWhereTheyFinished: on lowrank's oracle-complexity x
// axis, every racer's curve ends in the column of its own final oracle
// complexity (a racer that finished early is not drawn flat to the right
// edge), to within a column.
func TestFinishedRacersEndWhereTheyFinished(t *testing.T) {
	h := finished(t, "lowrank")
	h.size(120, 36)
	h.key("x")
	defer h.key("x")
	screen := h.screen() // draws: the geometry is the drawing's
	v := runViewOf(h)
	xm := v.xAxisMetric()
	lo, hi := v.xRange(xm)
	m := v.chartMetrics()[0]
	g := v.geoms[m]
	if !g.OK || !strings.Contains(screen, "x: ") {
		t.Fatalf("no oracle axis:\n%s", screen)
	}
	col := (hi - lo) / float64(len(g.PosOfCol)-1)
	ends := map[float64]bool{}
	for i := range v.table.Labels {
		rs := v.table.Rounds[i]
		final := math.Log10(rs[len(rs)-1].Value(xm))
		last := lastDrawn(g.Spans[i])
		if last < 0 {
			t.Fatalf("racer %d is not drawn", i+1)
		}
		// Column last shows the point of its own position and the
		// connector to the next; the curve's last point is at last or
		// last+1.
		at := lo + float64(g.PosOfCol[last]-1)/float64(len(g.PosOfCol)-1)*(hi-lo)
		if math.Abs(at-final) > 2*col {
			t.Errorf("racer %d ends at log10 x = %.3f, its final oracle complexity is %.3f (a column is %.3f)", i+1, at, final, col)
		}
		ends[math.Round(at/col)] = true
	}
	if len(ends) < 2 {
		t.Errorf("every racer ends in the same column:\n%s", h.screen())
	}
}

// TestModesNamedInCaptions: every mode that changes what a chart means is
// named in its caption while it is on — linear scale, full y range, tail
// zoom, the oracle x axis, squared FG, measured x labels.
func TestModesNamedInCaptions(t *testing.T) {
	h := finished(t, "paradox")
	h.size(120, 36)
	for _, step := range []struct{ key, says string }{{"l", "(linear"}, {"l", "(log"}, {"z", "full y range"}, {"z", "zoom: rounds"}, {"z", "narrowed to"}} {
		h.key(step.key)
		if !strings.Contains(h.screen(), step.says) {
			t.Errorf("after %s the caption does not say %q:\n%s", step.key, step.says, h.screen())
		}
	}
	sw := newHarness(t, preset(t, "fedgain-model", "trials=2"), WithSweepRunner(fakeSweep)).start()
	sw.size(120, 36)
	sw.exec(func() tea.Msg { return sweepFrameMsg{sw.sweep().runID} })
	for _, step := range []struct{ key, says string }{{"g", "FG² (ratio of squared errors)"}, {"x", "x labelled with"}} {
		sw.key(step.key)
		sw.exec(func() tea.Msg { return sweepFrameMsg{sw.sweep().runID} })
		if !strings.Contains(sw.screen(), step.says) {
			t.Errorf("after %s the sweep does not say %q:\n%s", step.key, step.says, sw.screen())
		}
	}
}

// TestGoldenModes draws the second mode of the screens whose key changes
// what a chart means, at 100×30: lowrank against the oracle complexity (x),
// the federation gain of squared errors (g).
func TestGoldenModes(t *testing.T) {
	for _, test := range []struct{ preset, key string }{{"lowrank", "x"}, {"fedgain-model", "g"}} {
		t.Run(test.preset+"-"+test.key, func(t *testing.T) {
			h := finished(t, test.preset)
			h.size(100, 30)
			h.key(test.key)
			defer h.key(test.key)
			if v, ok := h.m.v.(*sweepView); ok {
				h.exec(func() tea.Msg { return sweepFrameMsg{v.runID} })
			}
			golden.RequireEqual(t, []byte(h.screen()))
		})
	}
}

// TestRunViewKeepsBothCharts: from 80×24 up, every run preset's finished
// screen shows all of its charts with at least five plot rows each (the
// cluster view, whose grids take half the width, from 100×30; at 80×24 its
// charts take turns beside the grids).
func TestRunViewKeepsBothCharts(t *testing.T) {
	for _, p := range catalog.Presets() {
		if p.Scenario().IsSweep() {
			continue
		}
		h := finished(t, p.Name)
		for _, size := range goldenSizes {
			h.size(size[0], size[1])
			screen := h.screen()
			v := runViewOf(h)
			want := len(v.chartMetrics())
			if _, cluster := h.m.v.(*clusterView); cluster && size[0] < 100 {
				want = 1 // beside the grids, the charts take turns (tab) at 80×24
			}
			if got := len(v.geoms); got != want {
				t.Errorf("%s %v: %d of %d charts drawn:\n%s", p.Name, size, got, want, screen)
			}
			chartsReadable(t, fmt.Sprintf("%s %v", p.Name, size), v, screen)
		}
	}
}

// chartsReadable fails t for every chart of v drawn with fewer than
// minPlotRows plot rows (or not drawn at all).
func chartsReadable(t *testing.T, where string, v *runView, screen string) {
	t.Helper()
	for m, g := range v.geoms {
		if !g.OK || g.Rows < minPlotRows {
			t.Errorf("%s: chart of metric %d has %d plot rows, want ≥ %d:\n%s", where, m, g.Rows, minPlotRows, screen)
		}
	}
}

// TestReadmePictureIsTheScreen: the README's first picture is the finished
// paradox at 100×30, as the explorer draws it (a change of the screen
// fails here until the README shows it).
func TestReadmePictureIsTheScreen(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skipf("README not found: %v", err)
	}
	s := string(raw)
	start := strings.Index(s, "```\nfedscope · paradox")
	if start < 0 {
		t.Fatal("the README has no picture of the paradox")
	}
	start += len("```\n")
	end := strings.Index(s[start:], "\n```")
	h := finished(t, "paradox")
	h.size(100, 30)
	if got := h.screen(); s[start:start+end] != got {
		t.Errorf("the README's picture is not the screen at 100×30; the screen:\n%s", got)
	}
}
