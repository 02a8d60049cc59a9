package tui

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// TestPlaybackRevealsAtThePace checks that the computation runs ahead while
// the view reveals rounds at the pace, that space pauses the reveal, that .
// steps exactly one round, and that max reveals everything.
func TestPlaybackRevealsAtThePace(t *testing.T) {
	h := newHarness(t, small(t), WithPace(10)).start()
	r := h.race()
	// Rows are rounds 0..150: 151 positions (issue 11: rows start at θ_0).
	if r.available() != 151 || r.revealed != 0 {
		t.Fatalf("after computing: %d available, %d revealed; want 151 and 0", r.available(), r.revealed)
	}
	// Round 0 is drawn at once; then 10 rounds per second.
	h.tick(time.Second)
	if r.revealed != 11 {
		t.Fatalf("10 rounds/s for 1 s revealed %d rows, want round 0 and 10 more", r.revealed)
	}
	h.tick(300 * time.Millisecond)
	h.tick(300 * time.Millisecond)
	if r.revealed != 17 {
		t.Fatalf("0.6 s more revealed up to %d, want 17", r.revealed)
	}
	h.key(" ")
	h.tick(5 * time.Second)
	if r.revealed != 17 || !strings.Contains(h.screen(), "paused · space plays") {
		t.Fatalf("paused: revealed %d, status %q", r.revealed, statusOf(h.screen()))
	}
	h.key(".")
	if r.revealed != 18 {
		t.Fatalf(". revealed %d, want 18", r.revealed)
	}
	h.key(" ")
	h.tick(100 * time.Millisecond)
	if r.revealed != 19 {
		t.Fatalf("resumed at 10 rounds/s, 0.1 s revealed up to %d, want 19", r.revealed)
	}
	for range paceLadder {
		h.key(">")
	}
	h.tick(frameInterval)
	if r.revealed != 151 || !strings.Contains(h.screen(), "round 150/150") || !strings.Contains(h.screen(), "max rounds/s") {
		t.Fatalf("at max pace: revealed %d, status %q", r.revealed, statusOf(h.screen()))
	}
}

// TestPaceLadder checks < and > walk the ladder and the status names it.
func TestPaceLadder(t *testing.T) {
	h := newHarness(t, small(t), WithPace(10)).start()
	var got []string
	for range paceLadder {
		h.key(">")
		got = append(got, paceName(h.race().pace))
	}
	if want := []string{"20", "50", "100", "max", "max", "max", "max", "max"}; !slices.Equal(got, want) {
		t.Errorf("> walks %v, want %v", got, want)
	}
	got = got[:0]
	for range paceLadder {
		h.key("<")
		got = append(got, paceName(h.race().pace))
	}
	if want := []string{"100", "50", "20", "10", "5", "2", "1", "1"}; !slices.Equal(got, want) {
		t.Errorf("< walks %v, want %v", got, want)
	}
	if s := statusOf(h.screen()); !strings.Contains(s, "1 rounds/s") {
		t.Errorf("status %q does not name the pace", s)
	}
}

// TestDefaultPaceDrawsThePresetIn9s checks the default pace: the paradox's
// 150 rounds over 9 s.
func TestDefaultPaceDrawsThePresetIn9s(t *testing.T) {
	h := newHarness(t, small(t)).start()
	ticks := 0
	for h.race().revealed < 151 && ticks < 200 {
		h.tick(100 * time.Millisecond)
		ticks++
	}
	// Round 0 at once, then 150 rounds in 9 s (a tick either way for the
	// rounding of the fractions).
	if ticks < 89 || ticks > 91 || !strings.Contains(h.screen(), "round 150/150") {
		t.Errorf("all 151 rows revealed after %d ticks of 0.1 s, want 90", ticks)
	}
}

// TestRestartKeepsThePace checks that a parameter change restarts at the
// current pace.
func TestRestartKeepsThePace(t *testing.T) {
	h := newHarness(t, small(t), WithPace(10)).start()
	h.key(">")
	h.key("]")
	h.exec(nil)
	if p := h.race().pace; p != 20 {
		t.Errorf("after ], the pace is %v, want 20", p)
	}
	if eta := h.m.v.scenario().Get("eta"); eta != "0.15" {
		t.Errorf("] moved η to %s, want 0.15", eta)
	}
}

// TestCursorReadout checks the cursor moves over the revealed rounds and the
// readout shows every racer's values at the cursor's round with 3
// significant digits — the same numbers a headless run of the same seed
// writes.
func TestCursorReadout(t *testing.T) {
	sc := small(t)
	table := experiment.NewTable(sc)
	if _, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, sc, WithPace(maxPace)).start()
	h.tick(frameInterval)
	r := h.race()
	// Positions 1..151 show rounds 0..150, the rows of the table in order.
	check := func(pos int) {
		t.Helper()
		if got := r.cursorRound(); got != pos {
			t.Fatalf("cursor at %d, want %d", got, pos)
		}
		screen := h.screen()
		for i, label := range table.Labels {
			rd := table.Rounds[i][pos-1]
			want := label + " " + formatValue(rd.Values[0]) + " " + formatValue(rd.Values[1])
			if !strings.Contains(strings.Join(strings.Fields(screen), " "), want) {
				t.Errorf("position %d: the readout lacks %q\n%s", pos, want, screen)
			}
		}
	}
	check(151)
	h.key("left")
	h.key("left")
	check(149)
	if !strings.Contains(statusOf(h.screen()), "cursor 148") {
		t.Errorf("the status does not name the cursor: %q", statusOf(h.screen()))
	}
	h.key("home")
	check(1)
	h.key("left")
	check(1)
	for i := 0; i < 74; i++ {
		h.key("right")
	}
	check(75)
	h.key("end")
	check(151)
	if r.cursor != 0 {
		t.Errorf("at the newest round the cursor should follow the run, got %d", r.cursor)
	}
	if strings.Contains(h.screen(), string(chart.CursorGlyph)) {
		t.Error("a following cursor draws no line")
	}
	h.key("left")
	if !strings.Contains(h.screen(), string(chart.CursorGlyph)) {
		t.Error("a placed cursor draws its line")
	}
}

// TestCursorFollowsTheRun checks that with the cursor at the newest round
// the readout follows the reveal.
func TestCursorFollowsTheRun(t *testing.T) {
	h := newHarness(t, small(t), WithPace(10)).start()
	h.tick(time.Second)
	if r := h.race(); r.cursorRound() != 11 {
		t.Fatalf("readout at %d, want 11 (round 10)", r.cursorRound())
	}
	h.tick(time.Second)
	if r := h.race(); r.cursorRound() != 21 {
		t.Fatalf("readout at %d, want 21 (following)", r.cursorRound())
	}
}

// TestSoloHide checks digits hide and show racers: a hidden racer stays in
// the legend, dimmed and marked, and its glyph leaves the charts.
func TestSoloHide(t *testing.T) {
	h := newHarness(t, small(t), WithPace(maxPace)).start()
	h.tick(frameInterval)
	r := h.race()
	glyph := string(r.looks[1].glyph)
	if !strings.Contains(chartArea(h.screen()), glyph) {
		t.Fatalf("racer 2's glyph %q is not drawn", glyph)
	}
	h.key("2")
	screen := h.screen()
	if r.visible(1) || !strings.Contains(screen, "hidden") {
		t.Fatalf("2 did not hide racer 2:\n%s", screen)
	}
	if strings.Contains(chartArea(screen), glyph) {
		t.Errorf("hidden racer's glyph %q still drawn", glyph)
	}
	h.key("2")
	if !r.visible(1) || strings.Contains(h.screen(), "hidden") {
		t.Error("2 did not show racer 2 again")
	}
}

// TestPlateausOnDistinctRows is issue 17's picture test: with no key
// pressed, the finished paradox's gradient-norm chart puts the s=5, s=10
// and FedProx plateaus (0.0083, 0.0165, 0.0037) on three different rows at
// 100×30 and 120×36 — read from the drawing, where each racer's own glyph
// must be on the row the geometry gives its final value — and z cycles the
// y range through full and tail, each named in the caption.
func TestPlateausOnDistinctRows(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {120, 36}, {160, 48}} {
		h := newHarness(t, preset(t, "paradox"), WithPace(maxPace)).start()
		h.size(size[0], size[1])
		h.tick(frameInterval)
		v := h.m.v.(*runView)
		screen := h.screen()
		m := v.metricIndex("grad_norm")
		g, ok := v.geoms[m]
		if !ok || !g.OK {
			t.Fatalf("%v: no gradient chart drawn:\n%s", size, screen)
		}
		rows := map[int]int{}
		for i := 1; i < 4; i++ { // s=5, s=10, FedProx
			final := v.table.Rounds[i][len(v.table.Rounds[i])-1].Value(m)
			row := g.RowOf(math.Log10(final))
			rows[row] = i
			found := false
			for x := g.Cols / 2; x+1 < g.Cols; x++ {
				if g.Racer[row][x] == i {
					found = true
				}
			}
			if !found {
				t.Errorf("%v: racer %d's final value %.3g should be on row %d, where its glyph is not drawn:\n%s", size, i+1, final, row, screen)
			}
		}
		if len(rows) != 3 {
			t.Errorf("%v: the plateaus share rows %v:\n%s", size, rows, screen)
		}
		if !strings.Contains(screen, "narrowed to") {
			t.Errorf("%v: the caption does not say the axis is narrowed:\n%s", size, screen)
		}
		h.key("z")
		if !strings.Contains(h.screen(), "full y range") {
			t.Errorf("%v: z: the caption does not say full range:\n%s", size, h.screen())
		}
		h.key("z")
		if !strings.Contains(h.screen(), "zoom: rounds 75–150") {
			t.Errorf("%v: z z: the caption does not say the zoom:\n%s", size, h.screen())
		}
	}
}

// TestIdentityIsStable checks that adding or removing racers never changes
// another racer's glyph and colour.
func TestIdentityIsStable(t *testing.T) {
	spec := func(s string) experiment.RacerSpec {
		specs, err := experiment.ParseRacers(s, []experiment.RacerKind{
			{Name: "fedavg", Options: []experiment.RacerOption{{Key: "s", Min: 1, Max: 1000}, {Key: "b", Max: 1000}}},
			{Name: "fedprox"}})
		if err != nil {
			t.Fatal(err)
		}
		return specs[0]
	}
	wellKnown := preset(t, "paradox").Family.Looks()
	all := []string{"fedavg:s=1", "fedavg:s=5", "fedavg", "fedprox", "fedavg:s=3", "fedavg:s=7:b=20", "fedavg:s=40"}
	lookOfIn := func(list []string) map[string]look {
		var specs []experiment.RacerSpec
		for _, s := range list {
			specs = append(specs, spec(s))
		}
		out := map[string]look{}
		for i, l := range looksOf(specs, wellKnown) {
			out[list[i]] = l
		}
		return out
	}
	full := lookOfIn(all)
	seen := map[look]string{}
	for id, l := range full {
		if other, ok := seen[l]; ok {
			t.Errorf("%s and %s share a look", id, other)
		}
		seen[l] = id
	}
	// Every subset in any order keeps the looks of the well-known racers,
	// and the others keep theirs when nothing of theirs was removed.
	subsets := [][]string{all[:4], {"fedprox", "fedavg:s=1"}, {"fedavg", "fedavg:s=5", "fedavg:s=3"}, {"fedavg:s=40", "fedprox", "fedavg:s=5"}}
	for _, sub := range subsets {
		got := lookOfIn(sub)
		for _, id := range sub {
			if _, known := wellKnown[id]; known && got[id] != full[id] {
				t.Errorf("%s in %v looks %v, alone among all %v", id, sub, got[id], full[id])
			}
		}
	}
	reordered := lookOfIn([]string{"fedprox", "fedavg", "fedavg:s=5", "fedavg:s=1"})
	for id, l := range reordered {
		if l != full[id] {
			t.Errorf("reordering changed %s's look", id)
		}
	}
}

// TestAddingARacerKeepsTheOthersLooks checks identity through the picker:
// the paradox's racers keep their glyphs when FedAvg s=2 joins.
func TestAddingARacerKeepsTheOthersLooks(t *testing.T) {
	h := newHarness(t, small(t), WithPace(maxPace)).start()
	before := map[string]rune{}
	for i, l := range h.race().looks {
		before[h.race().specs[i].String()] = l.glyph
	}
	sc := h.m.v.scenario()
	if err := sc.Set("algorithms", "fedavg:s=1,fedavg:s=2,fedavg:s=5,fedavg,fedprox"); err != nil {
		t.Fatal(err)
	}
	h.exec(h.m.open(sc))
	for i, l := range h.race().looks {
		id := h.race().specs[i].String()
		if g, ok := before[id]; ok && g != l.glyph {
			t.Errorf("%s changed glyph from %c to %c", id, g, l.glyph)
		}
	}
}

// TestStatusCountsTheSlowestRacer checks that the reveal waits for the
// slowest racer still running and the status counts its rounds.
func TestStatusCountsTheSlowestRacer(t *testing.T) {
	sc := small(t)
	h := newHarness(t, sc, WithPace(maxPace))
	r := h.race()
	// Feed the race by hand: racer 3 lags at round 45 while the others are
	// at 150.
	h.exec(h.m.Init())
	r.table, r.first = experiment.NewTable(sc), 1
	r.finished = make([]bool, len(r.specs))
	r.revealed = 0
	for i := range r.specs {
		n := 150
		if i == 3 {
			n = 45
		}
		for k := 1; k <= n; k++ {
			r.table.Add(experiment.Point{Racer: i, Round: experiment.Round{Index: k, Values: paradoxValues(i, k)}})
		}
	}
	r.state = stateRunning
	h.tick(frameInterval)
	if s := statusOf(h.screen()); !strings.Contains(s, "round 45/150") {
		t.Errorf("status %q, want round 45/150 while a racer is at 45", s)
	}
	r.finished[3] = true // it stopped (e.g. diverged): it holds no one back
	h.tick(frameInterval)
	if s := statusOf(h.screen()); !strings.Contains(s, "round 150/150") {
		t.Errorf("status %q, want round 150/150 once the slow racer stopped", s)
	}
}

// TestPreparationShowsProgress checks the status names what the data
// preparation is doing.
func TestPreparationShowsProgress(t *testing.T) {
	h := newHarness(t, small(t), WithRunner(blockingRunner))
	h.m.Init() // its read would block until cancelled: not executed
	r := h.race()
	h.m.Update(progressMsg{runID: r.runID, progress: experiment.Progress{Stage: "random features", Done: 1200, Total: 2000}})
	if s := statusOf(h.screen()); !strings.Contains(s, "preparing data: random features 1200/2000") {
		t.Errorf("status %q", s)
	}
}

// statusOf returns the status line of a screen.
func statusOf(screen string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, " · seed ") {
			return l
		}
	}
	return ""
}

// chartArea returns the screen lines that belong to charts (those with an
// axis), without their labels.
func chartArea(screen string) string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.IndexAny(l, "┤┼"); i >= 0 {
			out = append(out, l[i:])
		}
	}
	return strings.Join(out, "\n")
}

var _ = strconv.Itoa

// queuedTicker is a ticker that, like tea.Tick, delivers later: the test
// fires the pending ticks when it chooses, so a tick of an old run can
// arrive after a restart.
type queuedTicker struct{ pending []func(time.Time) tea.Msg }

func (q *queuedTicker) tick(_ time.Duration, f func(time.Time) tea.Msg) tea.Cmd {
	q.pending = append(q.pending, f)
	return nil
}

// fire delivers every pending tick (and the ones they schedule, once).
func (q *queuedTicker) fire(h *harness) {
	due := q.pending
	q.pending = nil
	for _, f := range due {
		h.clock.advance(frameInterval)
		_, cmd := h.m.Update(f(h.clock.now()))
		h.exec(cmd)
	}
}

// TestRestartWhileTickPending: a restart while a playback tick of the old
// run is pending (always, while playing) must not stop the playback: the
// stale tick is dropped and the new run ticks on its own.
func TestRestartWhileTickPending(t *testing.T) {
	q := &queuedTicker{}
	sc := small(t, "rounds=60")
	h := newHarness(t, sc, WithRunner(streamRunner{vals: paradoxValues}.run), WithTicker(q.tick), WithPace(10))
	h.start()
	for i := 0; i < 5; i++ {
		q.fire(h)
	}
	if h.race().revealed == 0 {
		t.Fatal("nothing revealed before the restart")
	}
	h.key("r") // the old run's tick is still pending
	for i := 0; i < 30; i++ {
		q.fire(h)
	}
	if r := h.race(); r.revealed == 0 {
		t.Fatalf("after the restart nothing is revealed: the playback stopped (ticking=%v)", r.ticking)
	}
}

// TestRestartWhileReadOutstanding: a restart while a read of the old
// stream is armed must arm a read of the new one.
func TestRestartWhileReadOutstanding(t *testing.T) {
	var s stream
	ids := 0
	s.begin(context.Background(), &ids)
	s.ch = make(chan tea.Msg)
	if s.rearm(waitForStream, false) == nil {
		t.Fatal("no read armed")
	}
	s.begin(context.Background(), &ids)
	s.ch = make(chan tea.Msg)
	if s.rearm(waitForStream, false) == nil {
		t.Fatal("after a restart the new stream is never read (the old read still counts as armed)")
	}
	s.close()
}
