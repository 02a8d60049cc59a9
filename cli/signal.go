package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/fedscope/fedscope/cli/output"
)

// Signal is the cancellation cause of a context cancelled by a signal:
// Main exits with 128 + its number (SIGHUP 129, SIGINT 130, SIGTERM 143),
// the shell's convention.
type Signal struct{ os.Signal }

func (s Signal) Error() string { return "interrupted by " + s.String() }

// Status returns 128 + the signal's number.
func (s Signal) Status() int {
	if n, ok := s.Signal.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return ExitInterrupted
}

// statusOf returns the exit status of an interrupted command: that of the
// signal that cancelled ctx (129 for a lost terminal), or 130.
func statusOf(ctx context.Context) int {
	var s interface{ Status() int }
	if errors.As(context.Cause(ctx), &s) {
		return s.Status() // a Signal, or terminalGone
	}
	return ExitInterrupted
}

// Interrupt is fedscope's one owner of SIGINT, SIGTERM and SIGHUP (main
// subscribes sigs to them; the explorer is started without Bubble Tea's
// own handler). The first signal cancels the context with cause
// Signal{sig}: a headless command writes the rows computed so far and
// exits with 128 + the signal's number, the explorer restores the terminal
// and exits likewise. A second signal ends a headless command at once,
// with the same status and without its rows (the temporary file of an
// --out is removed); the explorer, which must restore the terminal first,
// is given its own second to do so. exit is os.Exit outside tests.
func Interrupt(sigs <-chan os.Signal, cancel context.CancelCauseFunc, stderr func(string), exit func(int)) {
	first := Signal{<-sigs}
	cancel(first)
	for range sigs {
		if explorer.Load() {
			continue
		}
		output.RemoveTemps()
		stderr(fmt.Sprintf("fedscope: %s again: stopped at once; rows not yet written are lost\n", first))
		exit(first.Status())
	}
}
