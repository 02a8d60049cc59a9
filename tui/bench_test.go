package tui

import (
	"testing"
	"time"

	"github.com/muesli/termenv"
)

// BenchmarkKeyToTrajectory measures a parameter key press (η up or down,
// alternately) until the whole 150-round, 4-racer trajectory of the
// restarted paradox is computed and received, with the real simulation; the
// data are prepared once before the timer starts, as they are after the
// first run.
func BenchmarkKeyToTrajectory(b *testing.B) {
	h := newHarness(b, preset(b, "paradox"), WithPace(maxPace)).start()
	keys := []string{"]", "["}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.key(keys[i%2])
		if r := h.race(); r.state != stateDone || r.table.Len() != 604 { // rounds 0..150 of 4 racers
			b.Fatalf("state %v, %d rows", r.state, r.table.Len())
		}
	}
}

// BenchmarkRenderFrame measures one full redraw of the run view at 160×48,
// colour on, with all 150 rounds of the four paradox racers, the cursor
// placed and the readout, the story and the annotations drawn.
func BenchmarkRenderFrame(b *testing.B) {
	h := newHarness(b, preset(b, "paradox"), WithPace(maxPace), WithProfile(termenv.ANSI256), WithTheme("dark")).start()
	h.size(160, 48)
	h.tick(frameInterval)
	h.key("left")
	v := h.m.v.(*runView)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.version++ // invalidate the cache
		_ = h.m.View()
	}
}

// BenchmarkRenderClusterFrame measures one full redraw of the cluster view
// at 160×48, colour on, after all 162 rounds of both racers (1000 clients).
func BenchmarkRenderClusterFrame(b *testing.B) {
	sc := preset(b, "mixture")
	h := newHarness(b, sc, WithPace(maxPace), WithProfile(termenv.ANSI256), WithTheme("dark")).start()
	h.size(160, 48)
	h.tick(frameInterval)
	v := h.m.v.(*clusterView)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.version++
		_ = h.m.View()
	}
}

// BenchmarkRevealAtMax measures streaming a whole paradox race through the
// view at max pace: Update for every batch of rounds and a frame per tick,
// the computation included.
func BenchmarkRevealAtMax(b *testing.B) {
	for i := 0; i < b.N; i++ {
		h := newHarness(b, preset(b, "paradox"), WithPace(maxPace)).start()
		h.tick(frameInterval)
		if h.race().revealed != 151 { // rounds 0..150
			b.Fatal("not all rounds revealed")
		}
		_ = h.m.View()
		h.m.Close()
	}
	_ = time.Second
}
