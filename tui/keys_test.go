package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/fedscope/fedscope/experiment"
)

// TestKeysThatCannotActSayWhy: a key that does nothing in the current state
// says why on the status line — a live knob at the end of its range (B at
// full batch, O at r = d), . after the last round, a racer number beyond
// the racers, a key of another view — and changes nothing.
func TestKeysThatCannotActSayWhy(t *testing.T) {
	for _, test := range []struct {
		sets []string
		keys []string
		says string
	}{
		{nil, []string{"B"}, "batch=0 is already at the end of its range"},
		{[]string{"subspace_dim=10"}, []string{"O"}, "subspace_dim=10 is already at the end of its range"},
		{nil, []string{"9"}, "there are 4 racers here"},
		{nil, []string{"m"}, "m does nothing on this view (elsewhere:"},
		{nil, []string{"."}, "the run ends at round 150"},
	} {
		h := newHarness(t, small(t, test.sets...), WithPace(maxPace)).start()
		h.tick(frameInterval)
		id, line := h.race().runID, experiment.Quote(catalog.Command(h.m.v.scenario()))
		for _, k := range test.keys {
			h.key(k)
		}
		if !strings.Contains(h.screen(), test.says) {
			t.Errorf("%v %v: the screen does not say %q:\n%s", test.sets, test.keys, test.says, h.screen())
		}
		if h.race().runID != id || experiment.Quote(catalog.Command(h.m.v.scenario())) != line {
			t.Errorf("%v %v: the key restarted or changed the scenario", test.sets, test.keys)
		}
	}
}

// TestKeysArrivingTogether: two keys in one message (typed faster than the
// terminal is read) are both handled.
func TestKeysArrivingTogether(t *testing.T) {
	h := newHarness(t, small(t), WithPace(10)).start()
	h.tick(time.Second)
	r := h.race()
	_, cmd := h.m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'2', '3'}})
	h.exec(cmd)
	if r.visible(1) || r.visible(2) {
		t.Errorf("\"23\" in one message hid racers 2: %v, 3: %v; want both hidden", !r.visible(1), !r.visible(2))
	}
}

// TestPausedChangeDrawsRoundZero: a parameter changed while paused draws
// round 0 of the new run at once and says that space plays; nothing blank.
func TestPausedChangeDrawsRoundZero(t *testing.T) {
	h := newHarness(t, small(t), WithPace(10)).start()
	h.tick(time.Second)
	h.key(" ")
	h.key("]")
	h.tick(frameInterval)
	screen := h.screen()
	r := h.race()
	if r.revealed != 1 || !strings.Contains(screen, "round 0/150") || !strings.Contains(screen, "paused · space plays") ||
		strings.Contains(screen, "waiting") || strings.Contains(screen, "no value to draw") {
		t.Errorf("after ] while paused: %d rows shown:\n%s", r.revealed, screen)
	}
	h.key(" ")
	h.tick(time.Second)
	if r.revealed != 11 {
		t.Errorf("space played %d rows in 1 s at 10 rounds/s, want 11", r.revealed)
	}
}

// TestStartPaused: --paused (WithView) opens at round 0, drawn and paused;
// the status line and the hint bar say what plays it and that ? and q exist.
func TestStartPaused(t *testing.T) {
	for _, size := range goldenSizes {
		h := newHarness(t, small(t), WithView(View{Paused: true})).start()
		h.size(size[0], size[1])
		h.tick(5 * time.Second)
		screen := h.screen()
		last := lastLine(screen)
		if h.race().revealed != 1 || !strings.Contains(last, "paused · space plays") || !strings.Contains(last, "? keys") || !strings.Contains(last, "q quit") {
			t.Errorf("%v: %d rows; last line %q", size, h.race().revealed, last)
		}
		if strings.Count(screen, "┤")+strings.Count(screen, "┼") < 10 {
			t.Errorf("%v: the charts are not drawn:\n%s", size, screen)
		}
	}
}
