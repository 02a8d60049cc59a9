// Package tui is the Bubble Tea program of fedscope: the live run view with
// its charts, key bindings, help and pickers, and the adapter that streams a
// running experiment into Bubble Tea messages (STYLE.md §3). It is the only
// package that imports the terminal libraries.
package tui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/fedscope/fedscope/experiment"
	"github.com/mattn/go-isatty"
)

// Main parses the root flags (--preset, --seed, --rounds, --set), opens the
// explorer and returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := experiment.NewFlagSet("fedscope")
	var sf experiment.ScenarioFlags
	sf.Register(fs)
	if err := experiment.ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, experiment.Usage())
			return experiment.ExitOK
		}
		fmt.Fprintf(stderr, "fedscope: %v\n", err)
		return experiment.ExitUsage
	}
	sc, err := sf.Scenario()
	if err != nil {
		fmt.Fprintf(stderr, "fedscope: %v\n", err)
		return experiment.ExitUsage
	}
	if f, ok := stdout.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		cmd := "run"
		if sc.IsSweep() {
			cmd = "sweep"
		}
		fmt.Fprintf(stderr, "fedscope: standard output is not a terminal; for headless output run\n"+
			"  fedscope %s --preset %s --format csv\n", cmd, sc.Preset)
		return experiment.ExitUsage
	}
	m := NewModel(ctx, sc)
	defer m.Close()
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(stdout))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "fedscope: %v\n", err)
		return experiment.ExitFailure
	}
	return experiment.ExitOK
}
