package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
)

// terminalGone is the cancellation cause of an explorer whose terminal
// went away: it exits with 129, as on SIGHUP.
type terminalGone struct{ why string }

func (e terminalGone) Error() string { return "the terminal went away (" + e.why + ")" }

// Status is the exit status of a lost terminal, that of SIGHUP.
func (terminalGone) Status() int { return 128 + int(syscall.SIGHUP) }

// checkEvery is how often the explorer checks its terminal.
const checkEvery = 250 * time.Millisecond

// terminalProbe is what watchTerminal asks, replaced in tests: whether
// each terminal the explorer started with still answers, and the parent's
// process ID.
type terminalProbe struct {
	fds    []uintptr
	isTerm func(fd uintptr) bool
	parent func() int
}

// probeOf watches the descriptors of stdout and standard input that are
// terminals now, and the parent.
func probeOf(stdout io.Writer) terminalProbe {
	p := terminalProbe{isTerm: isatty.IsTerminal, parent: os.Getppid}
	for _, f := range []any{stdout, os.Stdin} {
		if f, ok := f.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
			p.fds = append(p.fds, f.Fd())
		}
	}
	return p
}

// watchTerminal ends the explorer (cancel, with cause terminalGone) when
// its terminal goes away, whatever its parent ignores (issue 22). On a
// hang-up the kernel signals only the session leader, the shell, which
// passes SIGHUP on to its jobs unless it ignores it (nohup, a trap with an
// empty action); the explorer then reads end-of-file, which Bubble Tea
// takes quietly, and renders into nothing. So at every tick it checks that
// each of its terminals still answers (a hung-up terminal fails every
// request) and that its parent is the one it started with (a parent that
// died hands it to init or a subreaper). It returns when ctx ends.
func watchTerminal(ctx context.Context, cancel context.CancelCauseFunc, p terminalProbe, ticks <-chan time.Time) {
	parent := p.parent()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		for _, fd := range p.fds {
			if !p.isTerm(fd) {
				cancel(terminalGone{why: fmt.Sprintf("descriptor %d no longer answers as a terminal", fd)})
				return
			}
		}
		if now := p.parent(); parent > 1 && now != parent {
			cancel(terminalGone{why: fmt.Sprintf("its parent process %d ended", parent)})
			return
		}
	}
}
