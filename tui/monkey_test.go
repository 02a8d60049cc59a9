package tui

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/experiment"
)

// TestMonkey presses random keys, with random resizes, on every preset while
// the (fake) computations stream, and checks after every message that the
// program neither panics nor draws outside the terminal: fedscope must never
// crash on stage, whatever a nervous speaker types.
func TestMonkey(t *testing.T) {
	keys := []string{" ", "r", "n", "[", "]", "-", "+", "=", "h", "H", "o", "O", "b", "B", "a", "p", "e", "l",
		"x", "d", "c", "s", "f", "v", "?", "esc", "enter", "down", "up", "j", "k", "z", "1", "/", "tab"}
	dir := t.TempDir() // exports land here
	t.Chdir(dir)
	for _, preset := range experiment.Presets() {
		t.Run(preset.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(preset.Name))))
			m := NewModel(context.Background(), preset.Scenario(), WithRunner(fakeRunner), WithSweepRunner(fakeSweep),
				WithClock(fixedClock))
			defer m.Close()
			msgs := make(chan tea.Msg, 1024)
			run := func(cmd tea.Cmd) {
				if cmd == nil {
					return
				}
				go func() {
					if msg := cmd(); msg != nil {
						select {
						case msgs <- msg:
						case <-time.After(2 * time.Second):
						}
					}
				}()
			}
			w, h := 80, 24
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			run(m.Init())
			for step := 0; step < 250; step++ {
				var msg tea.Msg
				switch r := rng.IntN(10); {
				case r == 0:
					w, h = 20+rng.IntN(150), 5+rng.IntN(50)
					msg = tea.WindowSizeMsg{Width: w, Height: h}
				case r < 6:
					k := keys[rng.IntN(len(keys))]
					if k == "tab" {
						msg = tea.KeyMsg{Type: tea.KeyTab}
					} else {
						msg = keyMsg(k)
					}
				default:
					select {
					case msg = <-msgs:
					case <-time.After(5 * time.Millisecond):
						continue
					}
				}
				if batch, ok := msg.(tea.BatchMsg); ok {
					for _, c := range batch {
						run(c)
					}
					continue
				}
				if _, isQuit := msg.(tea.QuitMsg); isQuit {
					continue
				}
				_, cmd := m.Update(msg)
				run(cmd)
				m.Update(frameMsg{})
				v := m.View()
				if lines := strings.Count(v, "\n") + 1; lines > h {
					t.Fatalf("step %d (%T %v): %d lines on a %d×%d terminal", step, msg, msg, lines, w, h)
				}
				for _, l := range strings.Split(v, "\n") {
					if ansi.StringWidth(l) > w {
						t.Fatalf("step %d (%T %v): a line of %d cells on a %d×%d terminal: %q", step, msg, msg, ansi.StringWidth(l), w, h, ansi.Strip(l))
					}
				}
			}
		})
	}
}
