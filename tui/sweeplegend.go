package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
)

// legend reads every curve's charted means at the cursor's grid value (the
// last value while the cursor is off): glyph, number, label and values in
// aligned columns — a curve hidden under another's glyphs is read here; a
// curve without any value yet says so. A tight legend plans no room for
// notes, so that curves go two to a line where they fit.
func (v *sweepView) legend(w int, tight bool) []string {
	t := v.table
	at := v.cursorIndex()
	var header []string
	for _, mi := range v.charted() {
		header = append(header, t.Metrics[mi].Name)
	}
	rows := make([]legendRow, len(t.Labels))
	for i, l := range t.Labels {
		row := legendRow{look: v.labelLooks[i], number: i + 1, label: l, dim: v.hidden[i]}
		any := false
		for _, mi := range v.charted() {
			for p := range t.Grid {
				if mean, _, _ := t.Stat(p, i, mi); !math.IsNaN(mean) && !math.IsInf(mean, 0) {
					any = true
				}
			}
			s := "–"
			if mean, _, k := t.Stat(at, i, mi); k > 0 && !math.IsNaN(mean) && !math.IsInf(mean, 0) {
				s = formatValue(mean)
			}
			row.values = append(row.values, s)
		}
		switch {
		case row.dim:
			row.notes = []string{"hidden"}
		case !any && t.Done() > 0:
			row.notes = []string{"no value yet"}
		}
		rows[i] = row
	}
	reserve := 12
	if tight {
		reserve = 0
	}
	return legendTable(v.c.styles, header, rows, reserve, w)
}

// cursorIndex is the grid index the legend reads: the cursor's, or the
// last.
func (v *sweepView) cursorIndex() int {
	if v.cursor > 0 {
		return v.cursor - 1
	}
	return len(v.table.Grid) - 1
}

// dataAtCursor lists the table-only metrics that are properties of the
// data at the cursor's value, equal for every racer (FedNewton's Υ, the
// local size, the empirical heterogeneity, the realised Γ): what the x axis
// means there. Per-racer counts (diverged trials, epochs) are left out.
func (v *sweepView) dataAtCursor() []string {
	t := v.table
	var out []string
	for mi, m := range t.Metrics {
		if !m.TableOnly || strings.HasPrefix(m.Name, "diverged") {
			continue
		}
		val, same, seen := 0.0, true, false
		for r := range t.Labels {
			mean, _, k := t.Stat(v.cursorIndex(), r, mi)
			if k == 0 || math.IsNaN(mean) {
				continue
			}
			if seen && math.Abs(mean-val) > 1e-9*math.Max(math.Abs(val), 1) {
				same = false
			}
			val, seen = mean, true
		}
		if seen && same {
			out = append(out, m.Name+" "+formatValue(val))
		}
	}
	return out
}

// progressLine is the progress bar with trials done, elapsed time and ETA.
func (v *sweepView) progressLine(w int) string {
	p := experiment.SweepProgress{Done: v.table.Done(), Total: v.table.Total(), Elapsed: v.elapsed}
	text := fmt.Sprintf(" %d/%d · %s", p.Done, p.Total, clock(p.Elapsed))
	if v.state == stateRunning && p.Done > 0 {
		text += " · ETA " + clock(p.ETA())
	}
	v.bar.Width = max(w-ansi.StringWidth(text)-1, 10)
	return ansi.Truncate(v.bar.ViewAs(p.Fraction())+text, w, "…")
}

func (v *sweepView) statusText() string {
	state := map[runState]string{stateRunning: "running", stateDone: "done", stateFailed: "failed", stateStopped: "stopped"}[v.state]
	if v.paused && v.state == stateRunning {
		state = "paused · space resumes"
	}
	if v.state == stateDone {
		// The count too: a short screen drops the progress bar once done.
		state = fmt.Sprintf("done: %d/%d", v.table.Done(), v.table.Total())
	}
	var parts []string
	if s := v.c.lessonStatus(); s != "" {
		// In a lesson the state comes first: a narrow screen cuts the
		// values read, not whether the sweep is done.
		parts = append(parts, s, state)
	}
	if len(v.table.Grid) > 0 {
		at := fmt.Sprintf("reading %s=%s", v.sc.Sweep.Knob, experiment.FormatFloat(v.table.Grid[v.cursorIndex()]))
		for _, p := range v.dataAtCursor() {
			at += " " + p
		}
		parts = append(parts, at) // first: it is what the legend reads
	}
	if v.c.lesson == nil {
		parts = append(parts, state)
	}
	parts = append(parts, "seed "+strconv.FormatUint(v.sc.Seed, 10))
	if fe := v.sc.Get("fed_error"); fe != "" {
		parts = append(parts, "fed error: "+fe)
	}
	return strings.Join(parts, " · ")
}

// messages are the sweep's sentences: a failure, the notice of the last
// key, the grid values where trials diverged.
func (v *sweepView) messages() []string {
	st := v.c.styles
	var msgs []string
	if v.fatal != "" {
		msgs = append(msgs, st.errorLine.Render(v.fatal))
	}
	if v.c.notice != "" {
		msgs = append(msgs, st.notice.Render(v.c.notice))
	}
	if d := diverged(v.table, v.sc.Sweep.Knob); d != "" {
		msgs = append(msgs, st.notice.Render(d))
	}
	return msgs
}

// axisName is how the status line names an axis metric.
func axisName(axis string) string {
	switch axis {
	case "delta_data":
		return "the empirical Δ_Dj"
	case "delta_model":
		return "the empirical Δ_fj"
	case "local_size":
		return "|D_j|"
	}
	return axis
}

// clock formats a duration as m:ss (or h:mm:ss).
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// diverged names, per racer, the grid values at which some trials
// diverged (a metric "diverged", the fraction of trials), with how many of
// the trials done: the means there average the other trials only, and a
// value where all diverged is a gap in the curve. "" when none did.
func diverged(t *experiment.SweepTable, knob string) string {
	mi := -1
	for k, m := range t.Metrics {
		if m.Name == "diverged" {
			mi = k
		}
	}
	if mi < 0 {
		return ""
	}
	var parts []string
	for r, label := range t.Labels {
		var at []string
		for i, x := range t.Grid {
			frac, _, k := t.Stat(i, r, mi)
			if k == 0 || !(frac > 0) {
				continue
			}
			n := int(math.Round(frac * float64(k)))
			what := fmt.Sprintf("%d/%d", n, k)
			if n == k {
				what = "all " + strconv.Itoa(k)
			}
			v := experiment.FormatFloat(x)
			if len(at) == 0 {
				v = knob + "=" + v
			}
			at = append(at, fmt.Sprintf("%s (%s)", v, what))
		}
		if len(at) > 0 {
			parts = append(parts, label+" at "+strings.Join(at, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "diverged trials, left out of the means: " + strings.Join(parts, "; ")
}
