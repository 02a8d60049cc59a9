package tui

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

// title is the first line: the preset and the scenario's summary.
func (r *race) title() string {
	st := r.c.styles
	return st.title.Render("fedscope · "+r.sc.Preset) + "  " + st.summary.Render(r.facts.Summary)
}

// statusText says where the race is: the lesson step, the rounds revealed
// (counted for the slowest racer), the pace, the state and the seed. In a
// lesson the state, with the key that moves on, comes before the round, so
// that a narrow screen cuts the round rather than the instruction.
func (r *race) statusText() string {
	var parts []string
	if s := r.c.lessonStatus(); s != "" {
		parts = append(parts, s)
	}
	state := r.stateText()
	if r.c.lesson != nil && state != "" {
		parts = append(parts, state)
	}
	switch {
	case r.state == statePreparing:
		p := r.progress
		s := "preparing data"
		if p.Stage != "" {
			s += ": " + p.Stage
			if p.Total > 0 {
				s += fmt.Sprintf(" %d/%d", p.Done, p.Total)
			}
		}
		parts = append(parts, s)
	case r.revealed == 0:
		parts = append(parts, fmt.Sprintf("round –/%d", r.sc.Rounds))
	default:
		parts = append(parts, fmt.Sprintf("round %d/%d", r.roundAt(r.revealed), r.sc.Rounds))
		if r.cursor > 0 {
			parts = append(parts, fmt.Sprintf("cursor %d", r.roundAt(r.cursor)))
		}
	}
	if r.c.lesson != nil {
		return strings.Join(parts, " · ")
	}
	parts = append(parts, paceName(r.pace)+" rounds/s")
	if state != "" {
		parts = append(parts, state)
	}
	parts = append(parts, "seed "+strconv.FormatUint(r.sc.Seed, 10))
	return strings.Join(parts, " · ")
}

// stateText is the playback's state in words, with the key that moves on
// where the playback waits for one.
func (r *race) stateText() string {
	switch {
	case r.state == stateFailed:
		return "failed"
	case r.holding() && r.c.lesson != nil && r.c.lesson.last():
		return "the lesson's end"
	case r.holding() && r.c.lesson != nil:
		return "PgDn: next step"
	case r.paused && r.c.lesson != nil:
		return "paused: PgDn plays"
	case r.paused && r.revealed >= r.positions() && r.state == stateDone:
		return "done"
	case r.paused:
		return "paused · space plays"
	case r.state == statePreparing:
		return ""
	case r.revealed < r.available():
		return "playing"
	case r.state == stateRunning:
		return "computing"
	case len(r.failures) > 0:
		return "done, " + strconv.Itoa(len(r.failures)) + " diverged"
	}
	return "done"
}

// messages are the sentences the race has for the user: failures, the
// notice of the last key, the warnings (each a sentence; never dropped).
func (r *race) messages() []string {
	st := r.c.styles
	var msgs []string
	if r.fatal != "" {
		msgs = append(msgs, st.errorLine.Render(r.fatal))
	}
	if len(r.failures) > 0 {
		msgs = append(msgs, st.errorLine.Render(r.failures[0].Error()))
	}
	if len(r.failures) > 1 {
		also := make([]string, len(r.failures)-1)
		for i, f := range r.failures[1:] {
			also[i] = divergedBrief(f)
		}
		msgs = append(msgs, st.errorLine.Render("also diverged: "+strings.Join(also, ", ")))
	}
	if r.c.notice != "" {
		msgs = append(msgs, st.notice.Render(r.c.notice))
	}
	for _, warn := range r.facts.Warnings {
		msgs = append(msgs, st.notice.Render("warning: "+warn))
	}
	for _, warn := range r.warnings {
		msgs = append(msgs, st.notice.Render("warning: "+warn.text))
	}
	// The notes of the data come last: of everything here they are the
	// first to be cut on a small screen (the help has them all).
	if r.c.notes != "" {
		msgs = append(msgs, st.muted.Render(r.c.notes))
	}
	return msgs
}

// summarizes reports whether the family summarises finished runs (the
// legend then plans room for it).
func (r *race) summarizes() bool {
	return len(r.sc.Family.Summarize(r.sc, experiment.NewTable(r.sc))) > 0
}

// summaryBriefs are the family's end-of-run summary per racer, in legend
// form, once the race is done and shown to its end (nil before).
func (r *race) summaryBriefs() [][]string {
	if r.state != stateDone || r.revealed < r.available() {
		return nil
	}
	var out [][]string
	for _, x := range r.sc.Family.Summarize(r.sc, r.table) {
		out = append(out, x.Brief)
	}
	return out
}

// statusBar is the last line: the status on the left, the hints on the
// right, as many as fit, "? keys" and "q quit" always.
func statusBar(st styles, status string, acts []action, w int) string {
	left := st.status.Render(status)
	var must, rest []string
	for _, a := range acts {
		switch {
		case a.hint == "":
		case a.keys[0] == "?" || a.keys[0] == "q":
			must = append(must, st.text.Render(a.name())+" "+st.muted.Render(a.hint))
		default:
			rest = append(rest, st.text.Render(a.name())+" "+st.muted.Render(a.hint))
		}
	}
	sep := st.muted.Render(" · ")
	fits := func(hints []string) bool {
		return ansi.StringWidth(left)+3+ansi.StringWidth(strings.Join(hints, sep)) <= w
	}
	hints := must
	for _, h := range rest {
		next := append(append([]string{}, hints[:len(hints)-len(must)]...), h)
		next = append(next, must...)
		if !fits(next) {
			break
		}
		hints = next
	}
	right := strings.Join(hints, sep)
	if !fits(hints) {
		// Too narrow for the status and the two keys: the keys win, the
		// status is cut (it is repeated in the help).
		room := max(w-ansi.StringWidth(right)-3, 0)
		return ansi.Truncate(left, room, "…") + "   " + right
	}
	gap := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	return left + strings.Repeat(" ", gap) + right
}

// wrapLines wraps messages to the width and keeps at most limit lines, the
// last one saying how many more there are when some do not fit (the help
// lists them all).
func wrapLines(msgs []string, w, limit int) []string {
	var lines []string
	for _, s := range msgs {
		lines = append(lines, strings.Split(ansi.Wrap(s, w, " "), "\n")...)
	}
	if len(lines) > limit && limit > 0 {
		more := fmt.Sprintf(" … %d more lines: ? shows them", len(lines)-limit+1)
		lines = append(lines[:limit-1], ansi.Truncate(lines[limit-1], max(w-ansi.StringWidth(more), 0), "")+more)
	}
	return lines
}

// divergedBrief names a failed racer and, for a divergence, its round.
func divergedBrief(err error) string {
	var re *experiment.RacerError
	var de *algorithms.DivergedError
	switch {
	case errors.As(err, &re) && errors.As(err, &de):
		return fmt.Sprintf("%s (round %d)", re.Label, de.Round)
	case errors.As(err, &re):
		return re.Label
	}
	return err.Error()
}

// stoppedAt returns the last position racer i computed, when it stopped
// early.
func (r *race) stoppedAt(i int) (int, bool) {
	if !r.finished[i] {
		return 0, false
	}
	n := len(r.table.Rounds[i])
	return n, n < r.positions()
}
