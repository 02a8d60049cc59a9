package tui

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

func mixturePreset(t testing.TB) experiment.Scenario {
	t.Helper()
	p, err := experiment.LookupPreset("mixture")
	if err != nil {
		t.Fatal(err)
	}
	return p.Scenario()
}

// fakeMixtureRunner streams a made-up clustering without numerics: racer 0
// spends T rounds in Phase 1, then its wrongly assigned clients thin out
// round by round; racer 1 merges cluster 1 into cluster 0 for good. The true
// labels come from the scenario's (cached) data, as in the real runner.
func fakeMixtureRunner(ctx context.Context, sc experiment.Scenario, ready func(experiment.Facts), emit func(experiment.Point)) (experiment.Result, error) {
	info, err := experiment.MixtureInfo(sc)
	if err != nil {
		return experiment.Result{}, err
	}
	racers := sc.Resolve()
	ready(experiment.NoFacts())
	T := sc.Mixture.Phase1Rounds
	for t := 1; t <= sc.Rounds; t++ {
		for r := range racers {
			if err := ctx.Err(); err != nil {
				return experiment.Result{}, err
			}
			rd := algorithms.Round{Index: t, Phase: 2, ClusterDist: 3 * math.Pow(0.9, float64(t)), Misclustered: math.NaN()}
			if r == 0 && t <= T {
				rd.Phase = 1
			} else {
				wrongPct := max(0, 40-2*(t-T)) // racer 0 sorts itself out
				rd.Assign = make([]int, len(info.Labels))
				wrong := 0
				for i, z := range info.Labels {
					rd.Assign[i] = z
					switch {
					case r == 1 && z == 1:
						rd.Assign[i] = 0
					case r == 0 && (i*7+t)%100 < wrongPct:
						rd.Assign[i] = (z + 1) % info.K
					}
					if rd.Assign[i] != z {
						wrong++
					}
				}
				rd.Misclustered = float64(wrong) / float64(len(info.Labels))
				if r == 1 {
					rd.ClusterDist = 2
				}
			}
			emit(experiment.Point{Racer: r, Round: rd})
		}
	}
	return experiment.Result{Racers: racers, Errs: make([]error, len(racers))}, nil
}

func newMixtureModel(t testing.TB, r Runner) *Model {
	t.Helper()
	m := NewModel(context.Background(), mixturePreset(t), WithRunner(r), WithClock(fixedClock))
	if tt, ok := t.(*testing.T); ok {
		tt.Cleanup(m.Close)
	}
	return m
}

// TestClusterViewShowsBands runs the fake clustering to the end at 80×24 and
// checks the grid: every true cluster has its glyph and client count in the
// gutter, and at the end racer 0's rows are solid bands of their own
// cluster's glyph; switching to racer 1 shows cluster 1's rows in cluster 0's
// glyph.
func TestClusterViewShowsBands(t *testing.T) {
	m := newMixtureModel(t, fakeMixtureRunner)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drain(t, m, m.Init())
	if m.cluster.info == nil {
		t.Fatal("no cluster info after the run")
	}
	ci := m.cluster.info
	v := view(m)
	for _, want := range []string{"FedMD + FedAvg s=5", "FedAvg s=5, random init", "cluster distance", "misclustered",
		"h H Δ", "c racer", "round 162/162", "done", "γ="} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	bands := func(v string) map[int]string {
		out := map[int]string{}
		z := -1
		for _, l := range strings.Split(v, "\n") {
			for c := 0; c < ci.K; c++ {
				g := clusterGlyphs[c]
				if strings.HasPrefix(l, g+" ") && strings.Contains(l, " "+strconv.Itoa(len(m.cluster.order[c]))+" ") {
					z = c
				}
			}
			if z >= 0 && len(l) > gutterWidth && !strings.HasPrefix(l, "  round") {
				cells := []rune(ansi.Strip(l))
				if len(cells) > gutterWidth+5 {
					out[z] += string(cells[gutterWidth : gutterWidth+5])
				}
			}
			if strings.HasPrefix(l, "  round") {
				break
			}
		}
		return out
	}
	got := bands(v)
	for z := 0; z < ci.K; z++ {
		if got[z] == "" || strings.Trim(got[z], clusterGlyphs[z]) != "" {
			t.Errorf("racer 0, cluster %d: cells %q, want solid %s", z, got[z], clusterGlyphs[z])
		}
	}
	m.Update(keyMsg("c"))
	v = view(m)
	if !strings.Contains(v, "• FedAvg s=5, random init · c: next racer") {
		t.Fatalf("c did not switch the grid:\n%s", v)
	}
	if got := bands(v); strings.Trim(got[1], clusterGlyphs[0]) != "" {
		t.Errorf("racer 1, cluster 1: cells %q, want cluster 0's %s", got[1], clusterGlyphs[0])
	}
}

// TestClusterViewPhase1 checks the grid in the middle of a run: Phase-1
// columns are dotted and the axis marks where Phase 2 starts.
func TestClusterViewPhase1(t *testing.T) {
	m := newMixtureModel(t, blockingRunner)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Init()
	sc := m.sc
	info, err := experiment.MixtureInfo(sc)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(clusterInfoMsg{runID: m.runID, info: info})
	var pts []experiment.Point
	for t0 := 1; t0 <= 20; t0++ {
		rd := algorithms.Round{Index: t0, Phase: 1, ClusterDist: 1, Misclustered: math.NaN()}
		if t0 > 12 {
			rd.Phase, rd.Assign, rd.Misclustered = 2, info.Labels, 0
		}
		pts = append(pts, experiment.Point{Racer: 0, Round: rd})
	}
	m.Update(pointsMsg{runID: m.runID, points: pts})
	m.Update(frameMsg{})
	v := view(m)
	if !strings.Contains(v, "▲ phase 2") || !strings.Contains(v, "phase 1") || !strings.Contains(v, strings.Repeat(phase1Cell, 12)) {
		t.Fatalf("no Phase-1 cells or boundary:\n%s", v)
	}
}

// TestSeparationKeys checks that h/H move Δ along its ladder from the drawn
// separation and restart the run, and that a stale info message is dropped.
func TestSeparationKeys(t *testing.T) {
	m := newMixtureModel(t, blockingRunner)
	m.Init()
	drawn, err := m.sc.TrueSeparation()
	if err != nil {
		t.Fatal(err)
	}
	want := stepLadder(deltaLadder, drawn, false)
	id := m.runID
	m.Update(keyMsg("h"))
	if m.sc.Mixture.Delta != want || m.runID == id {
		t.Fatalf("h: Δ %v (drawn %v), want %v with a restart", m.sc.Mixture.Delta, drawn, want)
	}
	m.Update(keyMsg("h"))
	m.Update(keyMsg("H"))
	if m.sc.Mixture.Delta != want {
		t.Fatalf("h H: Δ %v, want %v", m.sc.Mixture.Delta, want)
	}
	if !strings.Contains(m.sc.Summary(), "Δ="+strconv.FormatFloat(want, 'g', 3, 64)) {
		t.Fatalf("title %q does not show Δ=%v", m.sc.Summary(), want)
	}
	for range deltaLadder {
		m.Update(keyMsg("h"))
	}
	if m.sc.Mixture.Delta != deltaLadder[0] || !strings.Contains(view(m), "end of the ladder") {
		t.Fatalf("bottom of the ladder: Δ %v\n%s", m.sc.Mixture.Delta, view(m))
	}
	m.Update(clusterInfoMsg{runID: m.runID - 1, info: experiment.ClusterInfo{K: 3}})
	if m.cluster.info != nil {
		t.Fatal("a stale cluster info was kept")
	}
	m.Update(keyMsg("b"))
	if m.sc.Batch != 0 || !strings.Contains(view(m), "minibatches apply") {
		t.Fatalf("b on the mixture preset: batch %d\n%s", m.sc.Batch, view(m))
	}
}

// TestClusterViewNoPanicAtAnySize resizes a finished mixture run through
// every size, in both grid modes and with the help overlay.
func TestClusterViewNoPanicAtAnySize(t *testing.T) {
	m := newMixtureModel(t, fakeMixtureRunner)
	drain(t, m, m.Init())
	for w := 0; w <= 170; w += 13 {
		for h := 0; h <= 52; h += 5 {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			for _, k := range []string{"c", "?", "?"} {
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
}

// TestGoldenClusterView drives the program at 80×24 with the fake mixture
// runner and compares the final screen with
// testdata/TestGoldenClusterView.golden (regenerate with -update).
func TestGoldenClusterView(t *testing.T) {
	m := NewModel(context.Background(), mixturePreset(t), WithRunner(fakeMixtureRunner), WithClock(fixedClock))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("done")) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	final.Update(frameMsg{})
	golden.RequireEqual(t, []byte(final.View()))
}

// BenchmarkRenderClusterFrame measures one full redraw of the cluster view
// at 160×48, colour on, after all 162 rounds of both racers (1000 clients).
func BenchmarkRenderClusterFrame(b *testing.B) {
	m := NewModel(context.Background(), mixturePreset(b), WithRunner(fakeMixtureRunner))
	defer m.Close()
	m.styles.color = true
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	info, err := experiment.MixtureInfo(m.sc)
	if err != nil {
		b.Fatal(err)
	}
	m.Init()
	m.Update(clusterInfoMsg{runID: m.runID, info: info})
	var pts []experiment.Point
	fakeMixtureRunner(context.Background(), m.sc, func(experiment.Facts) {}, func(p experiment.Point) { pts = append(pts, p) })
	m.Update(pointsMsg{runID: m.runID, points: pts})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.render()
	}
}
