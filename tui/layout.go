package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/tui/chart"
)

// layout is a view's screen before it is fitted to the terminal: the title,
// the body (charts, grids), the story, the sentences of the moment, the
// legend and the status bar. Every view lays out through it, so that every
// view keeps the lesson at every size from 80×24 up:
//
//	title (one line, two when it does not fit)
//	body ··························· side panel (the story), where the body
//	                                 keeps chartMinWidth columns beside it
//	messages, or the caption (the story in one or two lines) where no panel fits
//	legend
//	status · hints
//
// The body gets every row the others leave. Messages take the caption's
// lines first — except a lesson step's, which the class must read: the
// messages then go under it — more of them take rows from the body down to
// minBody, and what still does not fit is counted on the last line
// ("? shows them").
type layout struct {
	title    string
	body     func(w, h int) string
	minBody  int    // rows below which the body would stop being readable
	story    string // the side panel's text
	panel    string // the side panel's heading
	caption  string // the story in a sentence or two, where no panel fits
	short    string // the caption without what the status line repeats (a lesson step's title), for a short screen
	capLines int    // the most lines the caption may take (2; a lesson step more)
	keepCap  bool   // messages go under the caption instead of over it (a lesson step)
	messages []string
	legend   func(w int) []string
	tight    func(w int) []string // the legend two racers to a line, for a short screen (nil: none)
	status   string
	acts     []action
	globals  []action // the keys of every view (help, quit, the lesson's)
}

// chartMinWidth is the narrowest the charts may get for a side panel to
// appear beside them: at 100 columns a panel would leave the paradox's 150
// rounds two thirds of a column each.
const chartMinWidth = 88

// panelWidth is the side panel's width on a w-column terminal.
func panelWidth(w int) int { return min(max(w/4, 30), 44) }

// render fits the layout to w×h. On a screen too short for the body to
// keep minBody rows it squeezes the rest, in this order: the caption
// without what the status line repeats, then the legend two racers to a
// line; the lesson's sentences and the charts are what the room came for.
func (l layout) render(st styles, w, h int) string {
	title := wrapLines([]string{l.title}, w, 3)
	status := statusBar(st, l.status, append(l.acts, l.globals...), w)
	pw := 0
	if l.story != "" && w-panelWidth(w)-2 >= chartMinWidth {
		pw = panelWidth(w)
	}
	var legend, area []string
	bodyH := 0
	for squeeze := 0; squeeze < 3; squeeze++ {
		legend, area = l.fitted(st, w, h, len(title), pw, squeeze)
		bodyH = max(h-len(title)-len(legend)-1-len(area), 1)
		if bodyH >= l.minBody {
			break
		}
	}
	var body string
	if pw > 0 {
		body = withPanel(st, l.body(w-pw-2, bodyH), l.panel, l.story, w-pw-2, pw, bodyH)
	} else {
		body = l.body(w, bodyH)
	}
	lines := append(title, body)
	lines = append(lines, area...)
	lines = append(lines, legend...)
	lines = append(lines, status)
	return chart.FitBox(strings.Join(lines, "\n"), w, h)
}

// fitted is the legend and the lines under the body (caption, messages) at
// a squeeze level: 0 as they are, 1 with the short caption, 2 also with the
// tight legend.
func (l layout) fitted(st styles, w, h, titleH, pw, squeeze int) (legend, area []string) {
	legend = l.legend(w)
	if squeeze >= 2 && l.tight != nil {
		if t := l.tight(w); len(t) < len(legend) {
			legend = t
		}
	}
	var caption []string
	if pw == 0 && l.caption != "" {
		text := l.caption
		if squeeze >= 1 && l.short != "" {
			text = l.short
		}
		caption = wrapLines([]string{st.muted.Render(text)}, w, max(l.capLines, 1))
	}
	area = caption
	if len(l.messages) > 0 {
		room := max(h-titleH-len(legend)-1-l.minBody, len(caption), 1)
		if l.keepCap && len(caption) > 0 {
			area = append(slices.Clone(caption), wrapLines(l.messages, w, max(room-len(caption), 1))...)
		} else {
			area = wrapLines(l.messages, w, room)
		}
	}
	return legend, area
}

// withPanel puts the side panel, heading and wrapped text, to the right of
// a body of width bw.
func withPanel(st styles, body, heading, text string, bw, pw, h int) string {
	panel := []string{st.caption.Render(heading)}
	panel = append(panel, strings.Split(ansi.Wrap(st.muted.Render(text), pw, " "), "\n")...)
	left := strings.Split(body, "\n")
	var b strings.Builder
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		l := ""
		if i < len(left) {
			l = left[i]
		}
		b.WriteString(chart.PadRight(l, bw) + "  ")
		if i < len(panel) {
			b.WriteString(panel[i])
		}
	}
	return b.String()
}

// stacking is how a view's charts share its body.
type stacking int

const (
	oneAtATime   stacking = iota // the selected chart; tab shows the next
	stacked                      // all of them, each with its axis line
	stackedTight                 // all of them, the axis line only under the last
)

// stackingFor is how charts that need `need` rows stacked (inner axis lines
// included) share a body of h rows.
func stackingFor(n, need, h int) stacking {
	switch {
	case n <= 1 || h >= need:
		return stacked
	case h >= need-(n-1):
		return stackedTight
	}
	return oneAtATime
}

// stackCharts draws charts into a w×h box: all of them stacked, else the
// selected one, the caption then saying how to see the others; the first
// charts get the spare rows, the last draws the x axis's labels, the others
// its line (none when tight: the next chart's caption separates them).
func stackCharts(ids []int, selected int, how stacking, w, h int, draw func(id, rows int, axis chart.XAxis, cycling bool) string) string {
	if len(ids) == 0 {
		return chart.FitBox("", w, h)
	}
	shown, cycling := ids, false
	if how == oneAtATime {
		i := selected % len(ids)
		shown, cycling = ids[i:i+1], true
	}
	n := len(shown)
	plot := h - stackRows(n)
	inner := chart.XLine
	if how == stackedTight {
		plot += n - 1
		inner = chart.XNone
	}
	var parts []string
	for k, id := range shown {
		rows := plot / n
		if k < plot%n {
			rows++
		}
		axis := inner
		if k == n-1 {
			axis = chart.XFull
		}
		parts = append(parts, draw(id, rows, axis, cycling))
	}
	return chart.FitBox(strings.Join(parts, "\n"), w, h)
}
