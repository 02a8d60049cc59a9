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
// process ID against the one at the start.
type terminalProbe struct {
	fds    []uintptr
	isTerm func(fd uintptr) bool
	parent func() int
	ppid   int // the parent at the start
}

// probeOf watches the descriptors of stdout and standard input that are
// terminals now, and the parent.
func probeOf(stdout io.Writer) terminalProbe {
	p := terminalProbe{isTerm: isatty.IsTerminal, parent: os.Getppid, ppid: os.Getppid()}
	for _, f := range []any{stdout, os.Stdin} {
		if f, ok := f.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
			p.fds = append(p.fds, f.Fd())
		}
	}
	return p
}

// lost says how the terminal went away: a terminal that no longer answers
// (a hung-up terminal fails every request), or a parent that is no longer
// the one the explorer started with (a parent that died hands it to init or
// a subreaper); "" while neither happened.
func (p terminalProbe) lost() string {
	for _, fd := range p.fds {
		if !p.isTerm(fd) {
			return fmt.Sprintf("descriptor %d no longer answers as a terminal", fd)
		}
	}
	if now := p.parent(); p.ppid > 1 && now != p.ppid {
		return fmt.Sprintf("its parent process %d ended", p.ppid)
	}
	return ""
}

// watchTerminal ends the explorer (cancel, with cause terminalGone) when
// its terminal goes away, whatever its parent ignores (issue 22). On a
// hang-up the kernel signals only the session leader, the shell, which
// passes SIGHUP on to its jobs unless it ignores it (nohup, a trap with an
// empty action); the explorer then reads end-of-file, which Bubble Tea
// takes quietly, or an error, after which it stops as if killed, and it
// renders into nothing. So the probe is asked at every tick. It returns
// when ctx ends.
func watchTerminal(ctx context.Context, cancel context.CancelCauseFunc, p terminalProbe, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		if why := p.lost(); why != "" {
			cancel(terminalGone{why: why})
			return
		}
	}
}
