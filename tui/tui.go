// Package tui is the Bubble Tea program of fedscope: the run, cluster and
// sweep views with their charts, keys, help and pickers, and the adapter that
// streams a running experiment into Bubble Tea messages (STYLE.md §3). It is
// the only package that imports the terminal libraries.
package tui

import (
	"context"
	"errors"
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/fedscope/fedscope/experiment"
)

// Run opens the explorer on a scenario and returns when the user quits.
func Run(ctx context.Context, cat *experiment.Catalog, eng *experiment.Engine, sc experiment.Scenario, out io.Writer, opts ...Option) error {
	m := NewModel(ctx, cat, eng, sc, opts...)
	defer m.Close()
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
