package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/fedscope/fedscope/experiment"
)

// Runner runs a scenario: ready is called once the data are prepared (with
// the facts the view shows before the first round, such as the reference
// line), emit once per round of every racer. The real runner is experiment.Prepare followed by
// experiment.Run; tests inject fakes.
type Runner func(ctx context.Context, sc experiment.Scenario, ready func(experiment.Facts), emit func(experiment.Point)) (experiment.Result, error)

// experimentRunner is the production Runner.
func experimentRunner(ctx context.Context, sc experiment.Scenario, ready func(experiment.Facts), emit func(experiment.Point)) (experiment.Result, error) {
	if err := sc.Validate(); err != nil {
		return experiment.Result{}, err
	}
	if sc.Family == experiment.FamilyMixture {
		if _, err := experiment.PrepareMixture(sc); err != nil {
			return experiment.Result{}, err
		}
		ready(experiment.NoFacts()) // no least-squares reference line
		return experiment.Run(ctx, sc, emit)
	}
	facts, _, err := experiment.Reference(sc)
	if err != nil {
		return experiment.Result{}, err
	}
	ready(facts)
	return experiment.Run(ctx, sc, emit)
}

// Messages of a run. Every one carries the id of the run that sent it, so
// messages of a cancelled run are recognised and dropped (STYLE.md §3).
type (
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
		res, err := run(ctx, sc,
			func(f experiment.Facts) { send(readyMsg{runID, f}) },
			func(p experiment.Point) { send(pointMsg{runID, p}) })
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
// (STYLE.md §3): its id, its cancellation, the channel it sends on, whether
// a read is armed, pausing, timing, and the throttled redraw. The run view
// and the sweep view each embed one.
type stream struct {
	runID   int
	cancel  context.CancelFunc
	ch      <-chan tea.Msg
	waiting bool // a read command is outstanding on ch
	paused  bool
	started time.Time
	elapsed time.Duration

	dirty, frameScheduled bool
}

// close cancels the active computation, if any.
func (s *stream) close() {
	if s.cancel != nil {
		s.cancel()
	}
}

// begin cancels the active computation and returns the context of the next
// one, under a new run id.
func (s *stream) begin(parent context.Context, now time.Time) context.Context {
	s.close()
	s.runID++
	ctx, cancel := context.WithCancel(parent)
	s.cancel = cancel
	s.started, s.elapsed = now, 0
	return ctx
}

// rearm arms the next read of ch with wait, unless paused (the producer then
// blocks on the full channel, which pauses the computation itself).
func (s *stream) rearm(wait func(<-chan tea.Msg) tea.Cmd) tea.Cmd {
	if s.paused || s.ch == nil {
		s.waiting = false
		return nil
	}
	s.waiting = true
	return wait(s.ch)
}

// scheduleFrame marks the view dirty and asks for one redraw a frame later,
// however many messages arrive meanwhile.
func (s *stream) scheduleFrame() tea.Cmd {
	s.dirty = true
	if s.frameScheduled {
		return nil
	}
	s.frameScheduled = true
	return tea.Tick(frameInterval, func(time.Time) tea.Msg { return frameMsg{} })
}

// received notes that messages arrived at now and schedules a redraw.
func (s *stream) received(now time.Time) tea.Cmd {
	s.elapsed = now.Sub(s.started)
	return s.scheduleFrame()
}

// ended notes that the computation finished at now; nothing is read any more.
func (s *stream) ended(now time.Time) {
	s.waiting = false
	s.elapsed = now.Sub(s.started)
}

// frameDue consumes a frame tick and reports whether the view must redraw.
func (s *stream) frameDue() bool {
	s.frameScheduled = false
	return s.dirty
}
