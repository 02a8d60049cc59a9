package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/tui/chart"
)

// legendRow is one racer's line of a legend table: its glyph and colour,
// its number and label, its values (one per column), and a note after them
// (the end-of-run summary, "stopped at round 12", "hidden").
type legendRow struct {
	look   look
	number int // 0: none
	label  string
	values []string
	notes  []string // alternatives, longest first; the longest that fits is shown
	dim    bool
}

// legendTable lays out a legend as a table: a header naming the columns,
// then one line per racer, columns aligned, so that a projector shows which
// number is which; when the table is narrow enough, racers go two per line.
// Notes are never cut: a row takes the longest alternative that fits.
// reserve is the width planned for notes when deciding how many racers go
// on a line.
func legendTable(st styles, header []string, rows []legendRow, reserve, w int) []string {
	t := newTableLayout(header, rows)
	// Two racers per line when both fit with room for a note of reserve
	// cells: decided before any note exists, so that the legend keeps its
	// height when the end-of-run summary arrives.
	perLine, rowW := 1, w
	if len(rows) > 1 && 2*(t.base+2+reserve)+3 <= w {
		perLine, rowW = 2, (w-3)/2
	}
	head := strings.Repeat(" ", t.lead) + t.cells(header)
	var entries []string
	for _, r := range rows {
		entries = append(entries, t.entry(st, r, rowW))
	}
	lines := []string{st.muted.Render(head)}
	if perLine == 2 {
		lines[0] = st.muted.Render(chart.PadRight(head, rowW) + "   " + head)
	}
	for i := 0; i < len(entries); i += perLine {
		line := entries[i]
		if perLine == 2 && i+1 < len(entries) {
			line = chart.PadRight(line, rowW) + "   " + entries[i+1]
		}
		lines = append(lines, ansi.Truncate(line, w, ""))
	}
	if strings.TrimSpace(strings.Join(header, "")) == "" {
		lines = lines[1:] // nothing to name
	}
	return lines
}

// tableLayout is the column widths of a legend table.
type tableLayout struct {
	labelW, numW int
	colW         []int
	lead, base   int // the glyph, number and label; the whole row without its note
}

func newTableLayout(header []string, rows []legendRow) tableLayout {
	var t tableLayout
	for _, r := range rows {
		t.labelW = max(t.labelW, ansi.StringWidth(r.label))
	}
	t.colW = make([]int, len(header))
	for j, h := range header {
		// Room for any value formatValue writes, so that the columns (and
		// whether racers go two to a line) stay put as the values change.
		t.colW[j] = max(ansi.StringWidth(h), valueWidth)
		for _, r := range rows {
			if j < len(r.values) {
				t.colW[j] = max(t.colW[j], ansi.StringWidth(r.values[j]))
			}
		}
	}
	if len(rows) > 1 {
		t.numW = len(strconv.Itoa(len(rows))) + 1
	}
	t.lead = 2 + t.numW + t.labelW // "g " + "n " + label
	t.base = t.lead + ansi.StringWidth(t.cells(nil))
	return t
}

// cells writes the values right-aligned under their headers.
func (t tableLayout) cells(vals []string) string {
	var b strings.Builder
	for j := range t.colW {
		v := ""
		if j < len(vals) {
			v = vals[j]
		}
		b.WriteString("  " + chart.PadLeft(v, t.colW[j]))
	}
	return b.String()
}

// entry writes one racer's row with the longest of its notes that fits in
// rowW cells, its name in its colour (dimmed when hidden).
func (t tableLayout) entry(st styles, r legendRow, rowW int) string {
	num := ""
	if t.numW > 0 {
		num = chart.PadRight(strconv.Itoa(r.number), t.numW)
	}
	name := string(r.look.glyph) + " " + num + chart.PadRight(r.label, t.labelW)
	text := t.cells(r.values)
	for _, n := range r.notes {
		if t.base+2+ansi.StringWidth(n) <= rowW {
			text += "  " + n
			break
		}
	}
	if r.dim {
		return st.dim.Render(name + text)
	}
	return st.paint(name, st.racerColor(r.look)) + text
}

// summaryReserve is the room a legend plans for an end-of-run summary that
// has not arrived yet.
const summaryReserve = 30

// readout is the run views' legend: for every racer, its glyph, number and
// label, its values at the cursor's round (3 significant digits), and, once
// the run is done and shown to its end, the family's summary of it; a
// hidden racer is dimmed. Its height never changes during a run, so that the
// charts keep their size. A tight readout plans no room for the summary, so
// that racers go two to a line where they fit (the summary then shows only
// where it still fits beside them).
func (r *race) readout(w int, metrics []int, tight bool) []string {
	t := r.cursorRound()
	var header []string
	for _, m := range metrics {
		if m >= 0 {
			header = append(header, r.table.Metrics[m].Label())
		}
	}
	briefs := r.summaryBriefs()
	rows := make([]legendRow, len(r.table.Labels))
	for i, label := range r.table.Labels {
		row := legendRow{look: r.looks[i], number: i + 1, label: label, dim: !r.visible(i)}
		// A racer that stopped early (FedLRGD's stop rule) reads its last
		// round's values: its curve may be too short to see.
		pos := t
		if at, stopped := r.stoppedAt(i); stopped && t > at {
			pos = at
			row.notes = []string{fmt.Sprintf("stopped at round %d", r.roundAt(at))}
		}
		for _, m := range metrics {
			if m < 0 {
				continue
			}
			if v, ok := r.valueAt(i, m, pos); ok {
				row.values = append(row.values, formatValue(v))
			} else {
				row.values = append(row.values, "–")
			}
		}
		if i < len(briefs) && len(briefs[i]) > 0 && row.notes == nil {
			row.notes = briefs[i]
		}
		if row.dim {
			row.notes = []string{"hidden"}
		}
		rows[i] = row
	}
	reserve := 0
	if r.summarizes() && !tight {
		reserve = summaryReserve
	}
	return legendTable(r.c.styles, header, rows, reserve, w)
}

// valueWidth is the widest value formatValue writes for a non-negative
// number: 1.20e-5, 1234567.
const valueWidth = 7

// formatValue writes a value with 3 significant digits: 0.0448, 8.31e-3, 12.5.
func formatValue(v float64) string {
	if v == 0 {
		return "0"
	}
	switch a := math.Abs(v); {
	case a >= 1e-3 && a < 1000:
		// Three significant digits, trailing zeros kept (0.0150, 1.20):
		// the precision shown is the precision meant.
		s := strconv.FormatFloat(v, 'g', 3, 64)
		if !strings.ContainsAny(s, "e") {
			digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0")
			if n := 3 - len(digits); n > 0 {
				if !strings.Contains(s, ".") {
					s += "."
				}
				s += strings.Repeat("0", n)
			}
		}
		return s
	case a >= 1000 && a < 1e7:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'e', 2, 64)
	s = strings.Replace(strings.Replace(s, "e-0", "e-", 1), "e+0", "e+", 1)
	return s
}
