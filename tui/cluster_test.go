package tui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/internal/slowtest"
	"github.com/fedscope/fedscope/tui/chart"
)

// mixtureFacts prepares the mixture preset's data once and returns the facts
// the cluster view reads (true labels and sizes).
func mixtureFacts(t testing.TB, sc experiment.Scenario) experiment.Facts {
	t.Helper()
	data, err := experiment.NewEngine().Prepare(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc.Family.Facts(sc, data)
}

// fakeMixtureRunner streams a made-up clustering without numerics: racer 0
// spends T rounds in Phase 1, then its wrongly assigned clients thin out
// round by round to wrongAtEnd of the clients; racer 1 merges cluster 1 into
// cluster 0 for good.
func fakeMixtureRunner(facts experiment.Facts, T int, wrongAtEnd float64) Runner {
	return func(ctx context.Context, sc experiment.Scenario, obs experiment.Observer) (experiment.Result, error) {
		info := facts.Clusters
		racers := sc.Racers()
		obs.Ready(facts)
		n := len(info.Labels)
		for t := 1; t <= sc.Rounds; t++ {
			for r := range racers {
				if err := ctx.Err(); err != nil {
					return experiment.Result{}, err
				}
				rd := experiment.Round{Index: t, Phase: 2, Values: []float64{2, 3 * math.Pow(0.9, float64(t)), math.NaN(), math.NaN()}}
				if r == 0 && t <= T {
					rd.Phase, rd.Values[0] = 1, 1
				} else {
					share := math.Max(wrongAtEnd, 0.4-0.02*float64(t-T)) // racer 0 sorts itself out
					rd.Assign = make([]int, n)
					wrong := 0
					for i, z := range info.Labels {
						rd.Assign[i] = z
						switch {
						case r == 1 && z == 1:
							rd.Assign[i] = 0
						case r == 0 && float64((i*7919)%n) < share*float64(n):
							rd.Assign[i] = (z + 1) % info.K
						}
						if rd.Assign[i] != z {
							wrong++
						}
					}
					rd.Values[2] = float64(wrong) / float64(n)
				}
				obs.Round(experiment.Point{Racer: r, Round: rd})
			}
		}
		for r := range racers {
			obs.RacerDone(r, nil)
		}
		return experiment.Result{Racers: racers, Errs: make([]error, len(racers))}, nil
	}
}

// TestClusterViewShowsBandsAndTheWrongClients runs the fake clustering to the
// end with 2 % of racer 0's clients wrong: every band shows its glyph and
// client count, the wrong clients are visible as ✗ cells and counted in the
// gutter, and racer 1's merged cluster shows as wrong cells throughout.
func TestClusterViewShowsBandsAndTheWrongClients(t *testing.T) {
	sc := preset(t, "mixture")
	facts := mixtureFacts(t, sc)
	h := newHarness(t, sc, WithRunner(fakeMixtureRunner(facts, 12, 0.02)), WithPace(maxPace)).start()
	h.size(96, 34)
	h.tick(frameInterval)
	screen := h.screen()
	for _, want := range []string{"FedMD + FedAvg s=5", "FedAvg s=5, random init", "d(θ,θ*)", "miscl",
		"round 180/180", "done", "γ=", "κ="} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	ci := facts.Clusters
	wrongByBand := make([]int, ci.K)
	n := len(ci.Labels)
	for i, z := range ci.Labels {
		if float64((i*7919)%n) < 0.02*float64(n) {
			wrongByBand[z]++
		}
	}
	for z := 0; z < ci.K; z++ {
		count := 0
		for _, l := range ci.Labels {
			if l == z {
				count++
			}
		}
		want := clusterGlyphs[z] + " " + padLeftNum(count)
		if wrongByBand[z] > 0 {
			want += " " + string(wrongGlyph) + strconv.Itoa(wrongByBand[z])
		}
		if !strings.Contains(screen, want) {
			t.Errorf("band %d: no gutter %q:\n%s", z, want, screen)
		}
	}
	total := 0
	for _, w := range wrongByBand {
		total += w
	}
	if want := fmt.Sprintf("%c %d/%d (%.1f %%)", wrongGlyph, total, n, 100*float64(total)/float64(n)); !strings.Contains(screen, want) {
		t.Errorf("the grid does not say %q:\n%s", want, screen)
	}
	checkWrongShare(t, h, wrongByBand)
	h.key("c")
	if !strings.Contains(h.screen(), "random init") || !strings.ContainsRune(gridArea(h.screen()), wrongGlyph) {
		t.Errorf("c: racer 1's merged cluster shows no wrong cells:\n%s", h.screen())
	}
}

// checkWrongShare reads the grid off the screen: in each band, the share of
// rows whose newest cell is ✗ is the band's misclustered share to within
// half a row, by rounding (a 2 %% band is not drawn as one row in six wrong).
func checkWrongShare(t *testing.T, h *harness, wrongByBand []int) {
	t.Helper()
	v := h.m.v.(*clusterView)
	ci := v.facts.Clusters
	members := make([]int, ci.K)
	for _, z := range ci.Labels {
		members[z]++
	}
	lines := strings.Split(h.screen(), "\n")
	gw := v.w - max(26, v.w*9/20) - 1 // the grid's width (panes)
	band, rows, wrong := -1, make([]int, ci.K), make([]int, ci.K)
	for _, l := range lines {
		r := []rune(l)
		if len(r) <= gutterWidth {
			continue
		}
		for z := 0; z < ci.K; z++ {
			if strings.HasPrefix(l, clusterGlyphs[z]+" ") {
				band = z
			}
		}
		if strings.HasPrefix(strings.TrimSpace(l), "round") {
			break
		}
		cells := strings.TrimRight(string(r[gutterWidth:min(len(r), gw)]), " ")
		if band < 0 || cells == "" || strings.ContainsAny(cells, "┤┼") {
			continue
		}
		rows[band]++
		if last := []rune(cells); last[len(last)-1] == wrongGlyph {
			wrong[band]++
		}
	}
	if rows[0] == 0 {
		t.Fatalf("no grid row read off the screen:\n%s", h.screen())
	}
	for z := range rows {
		want := float64(rows[z]) * float64(wrongByBand[z]) / float64(members[z])
		if math.Abs(float64(wrong[z])-want) > 0.5+1e-9 {
			t.Errorf("band %d: %d of %d rows end in %c, but %d of %d clients (%.1f rows' worth) are wrong",
				z, wrong[z], rows[z], wrongGlyph, wrongByBand[z], members[z], want)
		}
	}
}

func padLeftNum(n int) string { return chart.PadLeft(strconv.Itoa(n), 5) }

// gridArea returns the left part of the screen's lines (the grids).
func gridArea(screen string) string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		r := []rune(l)
		out = append(out, string(r[:min(len(r), 40)]))
	}
	return strings.Join(out, "\n")
}

// TestSeparationKeys checks that h/H move Δ along its ladder from the drawn
// separation and restart the run, and the end of the ladder says so.
func TestSeparationKeys(t *testing.T) {
	h := stalled(t, preset(t, "mixture"))
	id := h.race().runID
	h.press("h")
	sc := h.m.v.scenario()
	delta, _ := strconv.ParseFloat(sc.Get("delta"), 64)
	if delta == 0 || h.race().runID == id {
		t.Fatalf("h: Δ %v, restarted %v", delta, h.race().runID != id)
	}
	h.press("h")
	h.press("H")
	if got := h.m.v.scenario().Get("delta"); got != experiment.FormatFloat(delta) {
		t.Fatalf("h H: Δ %s, want %v", got, delta)
	}
	for range 20 {
		h.press("h")
	}
	if got := h.m.v.scenario().Get("delta"); got != "0.1" || !strings.Contains(h.screen(), "end of the ladder") {
		t.Fatalf("bottom of the ladder: Δ %s\n%s", got, h.screen())
	}
	h.press("b")
	if !strings.Contains(h.screen(), "b does nothing on this view") {
		t.Fatalf("b on the mixture preset:\n%s", h.screen())
	}
}

// TestClusterViewNoPanicAtAnySize resizes a finished mixture run through
// every size, in both grid modes and with the help overlay.
func TestClusterViewNoPanicAtAnySize(t *testing.T) {
	slowtest.Skip(t)
	sc := preset(t, "mixture")
	h := newHarness(t, sc, WithRunner(fakeMixtureRunner(mixtureFacts(t, sc), 12, 0.02)), WithPace(maxPace)).start()
	h.tick(frameInterval)
	for w := 0; w <= 170; w += 13 {
		for ht := 0; ht <= 52; ht += 5 {
			h.size(w, ht)
			for _, k := range []string{"c", "?", "?", "left"} {
				h.key(k)
			}
			v := h.m.View()
			if lines := strings.Count(v, "\n") + 1; ht > 0 && w > 0 && lines != ht {
				t.Fatalf("%d×%d: %d lines", w, ht, lines)
			}
			for _, l := range strings.Split(v, "\n") {
				if ansi.StringWidth(l) > w {
					t.Fatalf("%d×%d: line wider than the terminal: %q", w, ht, l)
				}
			}
		}
	}
}
