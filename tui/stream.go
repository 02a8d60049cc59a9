package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fedscope/fedscope/experiment"
)

// Runner runs a scenario, telling the observer what it produces. The real
// one is experiment.Engine.Run; tests inject fakes.
type Runner func(ctx context.Context, sc experiment.Scenario, obs experiment.Observer) (experiment.Result, error)

// Messages of a run. Every one carries the id of the run that sent it, so
// messages of a cancelled run are recognised and dropped (docs/codebase.md §3).
type (
	progressMsg struct {
		runID    int
		progress experiment.Progress
	}
	readyMsg struct {
		runID int
		facts experiment.Facts
	}
	pointMsg struct {
		runID int
		point experiment.Point
	}
	// pointsMsg is a batch of points drained from the channel at once, so a
	// fast simulation costs one Update per batch, not one per round; tail is
	// the non-point message that ended the batch, if any.
	pointsMsg struct {
		runID  int
		points []experiment.Point
		tail   tea.Msg
	}
	racerDoneMsg struct {
		runID int
		racer int
		err   error
	}
	runDoneMsg struct {
		runID int
		res   experiment.Result
		err   error
	}
)

// maxBatch bounds one pointsMsg so a slow terminal still sees progress.
const maxBatch = 2048

// startStream runs the runner in a producer goroutine (see produce).
func startStream(ctx context.Context, runID int, run Runner, sc experiment.Scenario) <-chan tea.Msg {
	return produce(ctx, func(send func(tea.Msg)) tea.Msg {
		res, err := run(ctx, sc, experiment.Observer{
			Progress:  func(p experiment.Progress) { send(progressMsg{runID, p}) },
			Ready:     func(f experiment.Facts) { send(readyMsg{runID, f}) },
			Round:     func(p experiment.Point) { send(pointMsg{runID, p}) },
			RacerDone: func(i int, err error) { send(racerDoneMsg{runID, i, err}) },
		})
		return runDoneMsg{runID, res, err}
	})
}

// produce runs work in a goroutine that sends its messages on a small
// buffered channel, then the message work returns, then closes the channel.
// Sends select on ctx.Done(), so the producer never blocks after
// cancellation; a full channel (when the view is paused) makes it wait,
// which pauses the computation itself. A cancelled computation is not an
// error and sends no final message.
func produce(ctx context.Context, work func(send func(tea.Msg)) tea.Msg) <-chan tea.Msg {
	ch := make(chan tea.Msg, 64)
	go func() {
		defer close(ch)
		send := func(msg tea.Msg) {
			select {
			case ch <- msg:
			case <-ctx.Done():
			}
		}
		done := work(send)
		if ctx.Err() != nil {
			return
		}
		send(done)
	}()
	return ch
}

// waitForStream reads the next message of a run, draining every point that is
// already waiting into one batch.
func waitForStream(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		return nextBatch(ch,
			func(msg tea.Msg) (int, experiment.Point, bool) {
				p, ok := msg.(pointMsg)
				return p.runID, p.point, ok
			},
			func(runID int, points []experiment.Point, tail tea.Msg) tea.Msg {
				return pointsMsg{runID: runID, points: points, tail: tail}
			})
	}
}

// nextBatch reads the next message from ch. When it is an item of a run
// (unpack says so), every item of the same run already waiting is read too,
// up to maxBatch, and pack turns them into one message together with the
// first other message met (the tail), so that a fast producer costs one
// Update per batch. Any other message is returned as it is; nil when ch is
// closed.
func nextBatch[T any](ch <-chan tea.Msg, unpack func(tea.Msg) (int, T, bool),
	pack func(runID int, items []T, tail tea.Msg) tea.Msg) tea.Msg {
	msg, ok := <-ch
	if !ok {
		return nil
	}
	runID, first, isItem := unpack(msg)
	if !isItem {
		return msg
	}
	items := []T{first}
	for len(items) < maxBatch {
		select {
		case next, ok := <-ch:
			if !ok {
				return pack(runID, items, nil)
			}
			if id, v, isItem := unpack(next); isItem && id == runID {
				items = append(items, v)
				continue
			}
			return pack(runID, items, next)
		default:
			return pack(runID, items, nil)
		}
	}
	return pack(runID, items, nil)
}

// stream is the life cycle of one background computation feeding a view
// (docs/codebase.md §3): its id, its cancellation, the channel it sends on and
// whether a read is armed. The race views and the sweep view each embed one.
type stream struct {
	runID   int
	cancel  context.CancelFunc
	ch      <-chan tea.Msg
	waiting bool // a read command is outstanding on ch
}

// close cancels the active computation, if any.
func (s *stream) close() {
	if s.cancel != nil {
		s.cancel()
	}
}

// begin cancels the active computation and returns the context of the next
// one, under a fresh run id (ids are unique across views, so a message of a
// closed view is never mistaken for one of the next).
func (s *stream) begin(parent context.Context, ids *int) context.Context {
	s.close()
	*ids++
	s.runID = *ids
	// A read still armed on the old channel ends with the old producer
	// (closed channel, or a message dropped by its run id): the new
	// channel gets its own read.
	s.waiting = false
	ctx, cancel := context.WithCancel(parent)
	s.cancel = cancel
	return ctx
}

// rearm arms the next read of ch with wait; hold keeps the channel unread
// (the producer then blocks on the full channel, which pauses the
// computation itself).
func (s *stream) rearm(wait func(<-chan tea.Msg) tea.Cmd, hold bool) tea.Cmd {
	if hold || s.ch == nil || s.waiting {
		return nil
	}
	s.waiting = true
	return wait(s.ch)
}

// arrived notes that the armed read has delivered.
func (s *stream) arrived() { s.waiting = false }

// ended notes that the computation finished; nothing is read any more.
func (s *stream) ended() { s.waiting, s.ch = false, nil }
