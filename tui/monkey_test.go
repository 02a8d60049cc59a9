package tui

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
)

// monkeyKeys are every key fedscope binds somewhere, and a few it does not.
var monkeyKeys = []string{" ", "r", "n", "[", "]", "-", "+", "=", "h", "H", "o", "O", "b", "B", "a", "p", "e", "l",
	"x", "d", "c", "S", "g", "f", "?", "esc", "enter", "down", "up", "j", "k", "z", "1", "2", "3", "9", "/", "tab",
	".", "<", ">", "left", "right", "home", "end", "i", "t", "T", "y", "q", "%", "ctrl+c"}

// scriptedRunner streams a smooth made-up race for any family: every metric
// of racer i at round t is (1 + i)·0.9^t + 0.01·i (positive, so log axes
// draw it), the assignment of a clustered family left out.
func scriptedRunner(ctx context.Context, sc experiment.Scenario, obs experiment.Observer) (experiment.Result, error) {
	metrics := sc.Family.Metrics(sc)
	return streamRunner{vals: func(i, t int) []float64 {
		v := make([]float64, len(metrics))
		for m := range v {
			v[m] = float64(1+i)*math.Pow(0.9, float64(t)) + 0.01*float64(i) + float64(m)
		}
		return v
	}}.run(ctx, sc, obs)
}

// TestMonkey presses random keys, with random resizes and playback ticks,
// on every preset while (scripted) computations stream, and checks after
// every message that the program neither panics nor draws outside the
// terminal: fedscope must never crash on stage, whatever a nervous speaker
// types. It runs a few thousand keys in all (fewer with -short).
func TestMonkey(t *testing.T) {
	steps := 400
	if testing.Short() {
		steps = 120
	}
	t.Chdir(t.TempDir()) // exports land here
	for _, p := range catalog.Presets() {
		t.Run(p.Name, func(t *testing.T) {
			sc := p.Scenario()
			if sc.IsSweep() {
				sc.Trials = 2 // restarts redo every trial: keep them cheap
			}
			monkey(t, sc, steps, rand.New(rand.NewPCG(7, uint64(len(p.Name)))), scriptedRunner, fakeSweep)
		})
	}
}

// monkey drives one model with random input for a number of steps.
func monkey(t testing.TB, sc experiment.Scenario, steps int, rng *rand.Rand, run Runner, sweep SweepRunner) {
	h := newHarness(t, sc, WithRunner(run), WithSweepRunner(sweep), WithExitLine(func(string) {}))
	w, ht := 80, 24
	h.size(w, ht)
	h.exec(h.m.Init())
	for step := 0; step < steps; step++ {
		var what string
		switch r := rng.IntN(10); {
		case r == 0:
			w, ht = 1+rng.IntN(200), 1+rng.IntN(60)
			h.size(w, ht)
			what = "resize " + strconv.Itoa(w) + "×" + strconv.Itoa(ht)
		case r < 3:
			h.tick(time.Duration(rng.IntN(2000)) * time.Millisecond)
			if v, ok := h.m.v.(*sweepView); ok {
				h.m.Update(sweepFrameMsg{v.runID})
			}
			what = "tick"
		default:
			k := monkeyKeys[rng.IntN(len(monkeyKeys))]
			if k == "q" || k == "ctrl+c" {
				h.press(k) // quits: the commands are not run
				h.m.Close()
				h = newHarness(t, sc, WithRunner(run), WithSweepRunner(sweep), WithExitLine(func(string) {}))
				h.size(w, ht)
				h.exec(h.m.Init())
			} else {
				h.key(k)
			}
			what = "key " + strconv.Quote(k)
		}
		v := h.m.View()
		if lines := strings.Count(v, "\n") + 1; lines > ht {
			t.Fatalf("step %d (%s): %d lines on a %d×%d terminal", step, what, lines, w, ht)
		}
		for _, l := range strings.Split(v, "\n") {
			if ansi.StringWidth(l) > w {
				t.Fatalf("step %d (%s): a line of %d cells on a %d×%d terminal: %q", step, what, ansi.StringWidth(l), w, ht, ansi.Strip(l))
			}
		}
	}
	h.m.Close()
}

// TestSoak is the long soak of issue 13, run on demand with
// FEDSCOPE_SOAK=<minutes>: random input on every preset with the real
// engine for that long, then the peak RSS and the goroutines left after
// closing every model are reported, and leaked goroutines fail the test.
func TestSoak(t *testing.T) {
	minutes, _ := strconv.Atoi(os.Getenv("FEDSCOPE_SOAK"))
	if minutes <= 0 {
		t.Skip("set FEDSCOPE_SOAK=<minutes> to run the soak")
	}
	t.Chdir(t.TempDir())
	before := runtime.NumGoroutine()
	end := time.Now().Add(time.Duration(minutes) * time.Minute)
	keys := 0
	rng := rand.New(rand.NewPCG(11, 13))
	for time.Now().Before(end) {
		for _, p := range catalog.Presets() {
			sc := p.Scenario()
			if sc.IsSweep() {
				sc.Trials = 1
			}
			eng := experiment.NewEngine()
			monkey(t, sc, 60, rng, eng.Run, experiment.RunSweep)
			keys += 60
		}
	}
	runtime.GC()
	// Producers wind down after their cancel: yield until they have (each
	// needs a few scheduling turns), without a timer.
	for i := 0; i < 1_000_000 && runtime.NumGoroutine() > before; i++ {
		runtime.Gosched()
	}
	after := runtime.NumGoroutine()
	status, _ := os.ReadFile("/proc/self/status")
	peak := ""
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			peak = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	t.Logf("soak: %d inputs over %d min, peak RSS %s, goroutines %d before, %d after", keys, minutes, peak, before, after)
	if after > before+2 {
		t.Errorf("goroutines leaked: %d before, %d after", before, after)
	}
}
