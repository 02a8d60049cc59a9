package tui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
)

// TestGoldenRunView drives the whole program at 80×24 with the fake runner
// and compares the final screen with testdata/TestGoldenRunView.golden
// (regenerate with `go test ./tui -update`).
func TestGoldenRunView(t *testing.T) {
	m := NewModel(context.Background(), paradox(t), WithRunner(fakeRunner), WithClock(fixedClock))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("done")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	final.Update(frameMsg{}) // the last frame may still be pending
	golden.RequireEqual(t, []byte(final.View()))
}
