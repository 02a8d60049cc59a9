package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
)

// TestGoldenParadox draws the paradox at a fixed round — rounds 0 to 59 revealed
// at 10 rounds/s after 6 s, the real computation — at 80×24, 100×30 and
// 160×48, and compares with testdata/*.golden (regenerate with -update).
func TestGoldenParadox(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {160, 48}} {
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
