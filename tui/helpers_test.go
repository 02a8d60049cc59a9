package tui

import (
	"context"
	"io"
	"math"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
)

func init() {
	// Goldens and text assertions see no colour codes.
	lipgloss.SetColorProfile(termenv.Ascii)
}

// fakeClock is a clock the tests move by hand: nothing here waits on real
// time.
type fakeClock struct{ t time.Time }

func newClock() *fakeClock { return &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// noTick never fires: tests deliver ticks themselves with tick().
func noTick(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }

var catalog = registry.Catalog()

// preset returns a preset's scenario with assignments applied.
func preset(t testing.TB, name string, sets ...string) experiment.Scenario {
	t.Helper()
	sc, err := catalog.Scenario(name, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// small is the paradox on a small federation, quick enough for every test.
func small(t testing.TB, sets ...string) experiment.Scenario {
	return preset(t, "paradox", append([]string{"clients=5", "dim=10", "samples=40"}, sets...)...)
}

// harness is a model with a fake clock and hand-delivered ticks.
type harness struct {
	t     testing.TB
	m     *Model
	clock *fakeClock
}

func newHarness(t testing.TB, sc experiment.Scenario, opts ...Option) *harness {
	t.Helper()
	clock := newClock()
	base := []Option{WithProfile(termenv.Ascii), WithTheme("mono"), WithClock(clock.now), WithTicker(noTick), WithOutput(io.Discard)}
	m := NewModel(context.Background(), catalog, experiment.NewEngine(), sc, append(base, opts...)...)
	h := &harness{t: t, m: m, clock: clock}
	t.Cleanup(m.Close)
	h.size(100, 30)
	return h
}

// size sends a window size.
func (h *harness) size(w, ht int) { h.m.Update(tea.WindowSizeMsg{Width: w, Height: ht}) }

// exec runs a command and every command its messages return, synchronously
// (the stream's reads block until the producer sends, which it always does;
// ticks never fire on their own).
func (h *harness) exec(cmd tea.Cmd) {
	for depth := 0; cmd != nil && depth < 100000; depth++ {
		msg := cmd()
		cmd = nil
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				h.exec(c)
			}
		case tea.QuitMsg:
		default:
			_, cmd = h.m.Update(msg)
		}
	}
}

// start runs Init and every message until the computation ends.
func (h *harness) start() *harness {
	h.exec(h.m.Init())
	return h
}

// key presses a key.
func (h *harness) key(k string) { _, cmd := h.m.Update(keyMsg(k)); h.exec(cmd) }

// tick moves the clock and delivers a playback tick.
func (h *harness) tick(d time.Duration) {
	h.clock.advance(d)
	if r := h.race(); r != nil {
		_, cmd := h.m.Update(tickMsg{r.runID})
		h.exec(cmd)
	}
}

// race returns the active race view's race, or nil for a sweep.
func (h *harness) race() *race {
	switch v := h.m.v.(type) {
	case *runView:
		return v.race
	case *clusterView:
		return v.race
	}
	return nil
}

// screen is the drawn screen without colour.
func (h *harness) screen() string { return ansi.Strip(h.m.View()) }

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
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// streamRunner is a Runner for scripted races: facts as given, then for
// t = 1..rounds every racer's values from vals(racer, t), stopping racer i
// after stop[i] rounds when set (with a divergence).
type streamRunner struct {
	facts experiment.Facts
	vals  func(racer, t int) []float64
	stop  map[int]int
}

func (s streamRunner) run(ctx context.Context, sc experiment.Scenario, obs experiment.Observer) (experiment.Result, error) {
	racers := sc.Racers()
	f := s.facts
	if f.Summary == "" {
		f = sc.Family.Facts(sc, nil)
	}
	obs.Ready(f)
	res := experiment.Result{Racers: racers, Errs: make([]error, len(racers)), Facts: f}
	for t := 1; t <= sc.Rounds; t++ {
		for i := range racers {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if n, ok := s.stop[i]; ok && t > n {
				continue
			}
			obs.Round(experiment.Point{Racer: i, Round: experiment.Round{Index: t, Values: s.vals(i, t)}})
		}
	}
	for i := range racers {
		obs.RacerDone(i, res.Errs[i])
	}
	return res, nil
}

// paradoxValues is a smooth stand-in for the paradox: racer i's gradient
// norm falls like 10·q^t to a plateau 0.01·i, its error to 0.05.
func paradoxValues(i, t int) []float64 {
	q := 0.9 - 0.1*float64(i)
	g := 10*math.Pow(q, float64(t)) + 0.01*float64(i)
	return []float64{g, 0.05 + 10*math.Pow(q, float64(t)), math.NaN(), 0.05}
}

// blockingRunner never emits; it returns when cancelled.
func blockingRunner(ctx context.Context, _ experiment.Scenario, _ experiment.Observer) (experiment.Result, error) {
	<-ctx.Done()
	return experiment.Result{}, ctx.Err()
}
