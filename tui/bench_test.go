package tui

import (
	"context"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// BenchmarkKeyToFirstPoint measures the time from a parameter key press (η
// up or down, alternately) to the first point of the restarted run reaching
// Update, with the real simulation on the paradox preset. The data are
// prepared once before the timer starts, as they are after the first run.
func BenchmarkKeyToFirstPoint(b *testing.B) {
	m := NewModel(context.Background(), paradox(b))
	defer m.Close()
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	firstPoint(b, m, m.Init())
	keys := []tea.KeyMsg{keyMsg("]"), keyMsg("[")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, cmd := m.Update(keys[i%2])
		firstPoint(b, m, cmd)
	}
}

// firstPoint runs the run's messages through Update until a point arrives.
func firstPoint(b *testing.B, m *Model, cmd tea.Cmd) {
	for m.table.Len() == 0 {
		if cmd == nil {
			b.Fatal("stream not armed")
		}
		msg := cmd()
		if batch, ok := msg.(tea.BatchMsg); ok {
			cmd = batch[len(batch)-1]
			continue
		}
		_, cmd = m.Update(msg)
	}
}

// BenchmarkRenderFrame measures one full redraw of the run view at 160×48
// with all 150 rounds of the four paradox racers.
func BenchmarkRenderFrame(b *testing.B) {
	m := NewModel(context.Background(), paradox(b), WithRunner(fakeRunner))
	defer m.Close()
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	cmd := m.Init()
	for m.table.Len() < 600 {
		msg := cmd()
		if batch, ok := msg.(tea.BatchMsg); ok {
			cmd = batch[len(batch)-1]
			continue
		}
		_, cmd = m.Update(msg)
		if cmd == nil {
			break
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.render()
	}
}
