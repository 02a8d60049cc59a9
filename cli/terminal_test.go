package cli

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchTerminal drives watchTerminal with its own ticks: it leaves the
// explorer alone while the terminals answer and the parent stays, and ends
// it, with status 129, when a terminal stops answering or the parent dies.
func TestWatchTerminal(t *testing.T) {
	for _, test := range []struct {
		name     string
		dead     uintptr // the descriptor that stops answering, 0 for none
		newPPID  int     // the parent after the loss, 0 for unchanged
		firstPID int
		ends     bool
	}{
		{"terminal answers, parent stays", 0, 0, 4242, false},
		{"stdout hung up", 1, 0, 4242, true},
		{"stdin hung up", 7, 0, 4242, true},
		{"parent gone", 0, 1, 4242, true},
		{"parent gone to a subreaper", 0, 999, 4242, true},
		{"started by init: nothing to lose", 0, 1, 1, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			var lost atomic.Bool
			asked := make(chan struct{}, 1) // the probe has been asked once more, to the end
			probe := terminalProbe{
				fds:    []uintptr{1, 7},
				isTerm: func(fd uintptr) bool { return !(lost.Load() && fd == test.dead) },
				parent: func() int {
					defer func() { asked <- struct{}{} }()
					if lost.Load() && test.newPPID != 0 {
						return test.newPPID
					}
					return test.firstPID
				},
				ppid: test.firstPID,
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			ticks := make(chan time.Time)
			done := make(chan struct{})
			go func() { watchTerminal(ctx, cancel, probe, ticks); close(done) }()
			for range 3 {
				ticks <- time.Time{}
				<-asked
			}
			if ctx.Err() != nil {
				t.Fatalf("ended while the terminal was there: %v", context.Cause(ctx))
			}
			lost.Store(true)
			select {
			case ticks <- time.Time{}:
			case <-done:
				t.Fatal("the watcher returned before the tick")
			}
			if !test.ends {
				<-asked
				cancel(nil)
				<-done
				if errors.As(context.Cause(ctx), new(terminalGone)) {
					t.Errorf("cause %v, want none", context.Cause(ctx))
				}
				return
			}
			<-done
			var gone terminalGone
			if !errors.As(context.Cause(ctx), &gone) || statusOf(ctx) != 129 {
				t.Errorf("cause %v, status %d; want the terminal gone, 129", context.Cause(ctx), statusOf(ctx))
			}
		})
	}
}
