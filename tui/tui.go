// Package tui is the Bubble Tea program of fedscope: the run, cluster and
// sweep views with their charts, keys, help and pickers, and the adapter that
// streams a running experiment into Bubble Tea messages (docs/codebase.md §3). It is
// the only package that imports the terminal libraries.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fedscope/fedscope/experiment"
)

// releaseAfter is how long Run lets the program stop by itself once ctx is
// cancelled before it restores the terminal itself and returns.
const releaseAfter = 500 * time.Millisecond

// Run opens the explorer on a scenario and returns when the user quits or
// ctx is cancelled.
//
// fedscope's main owns SIGINT, SIGTERM and SIGHUP and cancels ctx on them
// (cli.Interrupt), so the program runs without Bubble Tea's own
// signal handler: two handlers of the same signals deadlocked, Bubble
// Tea's blocking on a message loop that had stopped while the shutdown
// waited for it. The cancelled ctx kills the program, which restores the
// terminal; should the program not stop within releaseAfter (an Update
// stuck in a call that does not return), Run restores the terminal itself
// and returns an error, so that fedscope never leaves the terminal raw on
// the alternate screen.
func Run(ctx context.Context, cat *experiment.Catalog, eng *experiment.Engine, sc experiment.Scenario, out io.Writer, opts ...Option) error {
	m := NewModel(ctx, cat, eng, sc, append([]Option{WithOutput(out)}, opts...)...)
	defer m.Close()
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out), tea.WithoutSignalHandler())
	done := make(chan error, 1)
	go func() {
		_, err := p.Run()
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		t := time.NewTimer(releaseAfter)
		defer t.Stop()
		select {
		case err = <-done:
		case <-t.C:
			p.ReleaseTerminal()
			return fmt.Errorf("the explorer did not stop within %v of the interrupt; the terminal was restored", releaseAfter)
		}
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
