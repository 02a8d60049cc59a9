package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// The cluster view draws a clustered race (docs/design.md, "Cluster panel"): on
// the left one row per client, grouped by true cluster, one column per
// round, newest on the right, each cell the cluster the client picked in
// that round; on the right the family's two charts with the boundary
// between the phases marked. The assignments arrive relabelled by the best
// permutation, so a correct clustering reads as solid bands. A band cannot
// show all of its clients, so it shows the wrong ones first (the clients
// whose label at the shown round is not their cluster's, then those that
// changed last) and its gutter counts them; a wrong cell is drawn with the
// cross glyph so that 2 % misclustered is visible at a glance.
type clusterView struct {
	runView
	racer int // the racer whose assignments a single grid shows
}

func newClusterView(c *common, sc experiment.Scenario) *clusterView {
	return &clusterView{runView: runView{race: newRace(c, sc), w: c.width, h: c.height}}
}

func (v *clusterView) help() (string, []action) {
	_, acts := v.runView.help()
	if len(v.table.Labels) > 1 {
		acts = append(acts, action{keys: []string{"c"}, help: "assignments of the next racer", hint: "racer", group: "view",
			run: func() tea.Cmd { v.racer = (v.racer + 1) % len(v.table.Labels); v.version++; return nil }})
	}
	intro := v.sc.Family.Help(v.sc) + " " + string(wrongGlyph) + " marks a client whose label is wrong at that round; the gutter counts them."
	return intro, acts
}

func (v *clusterView) view() string {
	key := [5]int{v.version, v.c.version, v.w, v.h, v.racer}
	return v.frame.get(key, v.draw)
}

func (v *clusterView) draw() string {
	l := v.layout(v.panes)
	// The grids need a band of rows per cluster; the charts beside them
	// theirs, with their notes wrapped in the pane.
	l.minBody = max(3*max(v.k(), 1)+4, v.stackNeed(chartPaneWidth(v.w)))
	if c := clusterCaption(v.facts.Clusters); c != "" {
		l.title += "\n" + v.c.styles.muted.Render(c)
	}
	return l.render(v.c.styles, v.w, v.h)
}

// k is the number of clusters (0 before the data are ready).
func (v *clusterView) k() int {
	if v.facts.Clusters == nil {
		return 0
	}
	return v.facts.Clusters.K
}

// chartPaneWidth is the width of the charts beside the grids.
func chartPaneWidth(w int) int { return max(26, w*9/20) }

// panes draws the assignment grids beside the charts into w×body.
func (v *clusterView) panes(w, body int) string {
	cw := chartPaneWidth(w)
	gw := w - cw - 1
	left := v.gridsView(gw, body)
	right := v.charts(cw, body)
	ll, rl := strings.Split(left, "\n"), strings.Split(right, "\n")
	var b strings.Builder
	for i := 0; i < body; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		l := ""
		if i < len(ll) {
			l = ll[i]
		}
		b.WriteString(l)
		b.WriteString(strings.Repeat(" ", max(0, gw-ansi.StringWidth(l))+1))
		if i < len(rl) {
			b.WriteString(rl[i])
		}
	}
	return b.String()
}

// gridsView stacks one grid per racer when each gets enough rows, otherwise
// shows the selected racer's grid (c switches).
func (v *clusterView) gridsView(w, h int) string {
	ci := v.facts.Clusters
	if ci == nil || ci.K == 0 {
		return chart.Placeholder(w, h, "preparing the clients…")
	}
	n := len(v.table.Labels)
	if n == 0 {
		return chart.Placeholder(w, h, "no racer")
	}
	if h/n >= 3*ci.K+2 {
		parts := make([]string, n)
		for r := range parts {
			hh := h / n
			if r == n-1 {
				hh = h - (n-1)*(h/n)
			}
			parts[r] = v.gridView(r, w, hh, false)
		}
		return strings.Join(parts, "\n")
	}
	return v.gridView(min(v.racer, n-1), w, h, n > 1)
}

// gutterWidth holds a cluster's glyph, its client count and how many are
// wrong: "█  334 ×12 ".
const gutterWidth = 12

// Cluster glyphs: with colour every cell is a block coloured by cluster;
// without, each cluster has its own glyph. A wrong cell is a cross.
var clusterGlyphs = []string{"█", "░", "╳", "≡", "◆", "○", "▲", "#"}

const (
	phase1Cell = "·"
	wrongGlyph = '✗'
)

func clusterGlyph(z int, color bool) string {
	if color {
		return "█"
	}
	if z < len(clusterGlyphs) {
		return clusterGlyphs[z]
	}
	return strconv.FormatInt(int64(z%36), 36)
}

// gridView draws one racer's assignments as exactly h lines of w cells: a
// caption, the client rows, and a round axis.
func (v *clusterView) gridView(racer, w, h int, switchHint bool) string {
	st := v.c.styles
	ci := v.facts.Clusters
	l := v.looks[racer]
	caption := st.paint(string(l.glyph), st.racerColor(l)) + " " + st.caption.Render(v.table.Labels[racer])
	if w, n, ok := v.misclustered(racer); ok {
		caption += st.muted.Render(fmt.Sprintf(" · %c %d/%d (%.1f %%)", wrongGlyph, w, n, 100*float64(w)/float64(max(n, 1))))
	}
	if hint := st.muted.Render(" · c: next racer"); switchHint && ansi.StringWidth(caption+hint) <= w {
		caption += hint // where it fits: the status bar and ? name c too
	}
	rows := h - 2
	cols := w - gutterWidth
	if rows < ci.K || cols < 4 {
		return chart.FitBox(caption, w, h)
	}
	rs := v.table.Rounds[racer]
	shownTo := min(v.cursorRound(), len(rs))
	first := max(0, shownTo-cols)
	shown := rs[first:shownTo]
	order := bandOrder(ci, shown)
	lines := []string{ansi.Truncate(caption, w, "…")}
	alloc := allocateRows(ci.K, rows, order)
	var b strings.Builder
	for z, n := range alloc {
		members := order[z]
		wrong := 0
		if len(shown) > 0 && shown[len(shown)-1].Assign != nil {
			for _, i := range members {
				if a := shown[len(shown)-1].Assign; i < len(a) && a[i] != z {
					wrong++
				}
			}
		}
		for q := 0; q < n; q++ {
			b.Reset()
			if q == 0 {
				g := clusterGlyph(z, st.color)
				if st.color {
					g = st.paint(g, st.clusterColor(z))
				}
				count := fmt.Sprintf("%5d", len(members))
				if wrong > 0 {
					count += fmt.Sprintf(" %c%d", wrongGlyph, wrong)
				}
				b.WriteString(g + " " + chart.PadRight(count, gutterWidth-2))
			} else {
				b.WriteString(strings.Repeat(" ", gutterWidth))
			}
			// The wrong clients first, then evenly over the rest.
			client := members[pickMember(len(members), n, q, wrong)]
			v.writeCells(&b, shown, client, z)
			lines = append(lines, b.String())
		}
	}
	lines = append(lines, v.gridAxis(shown, cols))
	return chart.FitBox(strings.Join(lines, "\n"), w, h)
}

// misclustered counts the clients whose label is wrong at the round the
// grid shows last (the cursor's), of all clients.
func (v *clusterView) misclustered(racer int) (wrong, n int, ok bool) {
	ci := v.facts.Clusters
	rs := v.table.Rounds[racer]
	k := min(v.cursorRound(), len(rs))
	if ci == nil || k == 0 || rs[k-1].Assign == nil {
		return 0, 0, false
	}
	for i, a := range rs[k-1].Assign {
		if i < len(ci.Labels) && a != ci.Labels[i] {
			wrong++
		}
	}
	return wrong, len(ci.Labels), true
}

// pickMember chooses which of a band's members row q of n shows. The
// band's clients are ordered wrong ones first; the wrong ones get rows in
// proportion to their share of the band (rounded: 2 % of a band shown in
// six rows is no row — the gutter and the caption count them), the others
// the rest, each group sampled evenly. So the share of ✗ cells in the
// newest column is the misclustered share, to within one row.
func pickMember(members, rows, q, wrong int) int {
	if members <= rows {
		return min(q, members-1)
	}
	wrongRows := min(int(math.Round(float64(rows)*float64(wrong)/float64(members))), rows, wrong)
	if q < wrongRows {
		return min(wrong-1, int((float64(q)+0.5)*float64(wrong)/float64(wrongRows)))
	}
	rest, restRows := members-wrong, rows-wrongRows
	return wrong + min(rest-1, int((float64(q-wrongRows)+0.5)*float64(rest)/float64(restRows)))
}

// bandOrder returns, per true cluster, its clients in display order: those
// wrong at the last shown round first, then by the round of their last
// change (latest first), then by size.
func bandOrder(ci *experiment.ClusterInfo, shown []experiment.Round) [][]int {
	order := make([][]int, ci.K)
	for i, z := range ci.Labels {
		if z >= 0 && z < ci.K {
			order[z] = append(order[z], i)
		}
	}
	lastChange := make([]int, len(ci.Labels))
	var final []int
	for k, rd := range shown {
		if rd.Assign == nil {
			continue
		}
		if k > 0 && shown[k-1].Assign != nil {
			for i, a := range rd.Assign {
				if i < len(shown[k-1].Assign) && shown[k-1].Assign[i] != a {
					lastChange[i] = rd.Index
				}
			}
		}
		final = rd.Assign
	}
	wrong := func(i int) bool { return final != nil && i < len(final) && final[i] != ci.Labels[i] }
	for _, idx := range order {
		slices.SortStableFunc(idx, func(a, b int) int {
			if wa, wb := wrong(a), wrong(b); wa != wb {
				if wa {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(lastChange[b], lastChange[a]); c != 0 {
				return c
			}
			return cmp.Compare(ci.Sizes[b], ci.Sizes[a])
		})
	}
	return order
}

// allocateRows splits rows among the true clusters in proportion to their
// sizes (largest remainders), at least one row each for non-empty clusters
// and never more rows than clients.
func allocateRows(k, rows int, order [][]int) []int {
	total := 0
	for _, o := range order {
		total += len(o)
	}
	alloc := make([]int, k)
	if total == 0 {
		return alloc
	}
	type rem struct {
		z int
		r float64
	}
	var rems []rem
	used := 0
	for z, o := range order {
		exact := float64(rows) * float64(len(o)) / float64(total)
		alloc[z] = min(len(o), int(exact))
		if len(o) > 0 && alloc[z] == 0 {
			alloc[z] = 1
		}
		used += alloc[z]
		rems = append(rems, rem{z, exact - math.Floor(exact)})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.r, a.r) })
	for i := 0; used < rows && i < 4*k; i++ {
		z := rems[i%k].z
		if alloc[z] < len(order[z]) {
			alloc[z]++
			used++
		}
	}
	for z := k - 1; used > rows && z >= 0; z-- { // the minimum of one row each overshot
		for alloc[z] > 1 && used > rows {
			alloc[z]--
			used--
		}
	}
	return alloc
}

// writeCells appends one client's row: a cell per shown round, its band z;
// colour runs are written once per run so that a frame stays cheap.
func (v *clusterView) writeCells(b *strings.Builder, shown []experiment.Round, client, band int) {
	st := v.c.styles
	cur := "\x00"
	for k := range shown {
		a := shown[k].Assign
		z := -1
		if client < len(a) {
			z = a[client]
		}
		glyph, color := phase1Cell, st.axis()
		switch {
		case z < 0:
		case z != band:
			glyph, color = string(wrongGlyph), st.clusterColor(z)
		default:
			glyph, color = clusterGlyph(z, st.color), st.clusterColor(z)
		}
		if !st.color {
			color = ""
			if z >= 0 && z != band {
				glyph = string(wrongGlyph)
			}
		}
		if color != cur {
			if cur != "\x00" && cur != "" {
				b.WriteString("\x1b[0m")
			}
			if color != "" {
				b.WriteString("\x1b[" + color + "m")
			}
			cur = color
		}
		b.WriteString(glyph)
	}
	if cur != "\x00" && cur != "" {
		b.WriteString("\x1b[0m")
	}
}

// clusterColor is the SGR colour of cluster z.
func (s styles) clusterColor(z int) string {
	if !s.color || len(s.clusterSGR) == 0 {
		return ""
	}
	return s.clusterSGR[z%len(s.clusterSGR)]
}

// gridAxis labels the first and last shown rounds and marks where Phase 2
// starts.
func (v *clusterView) gridAxis(shown []experiment.Round, cols int) string {
	axis := []rune(strings.Repeat(" ", cols))
	if len(shown) == 0 {
		return strings.Repeat(" ", gutterWidth) + string(axis)
	}
	put := func(at int, s string) {
		for i, r := range []rune(s) {
			if at+i >= 0 && at+i < cols {
				axis[at+i] = r
			}
		}
	}
	put(0, strconv.Itoa(shown[0].Index))
	last := strconv.Itoa(shown[len(shown)-1].Index)
	put(len(shown)-len([]rune(last)), last)
	for k := 1; k < len(shown); k++ {
		if shown[k].Phase == 2 && shown[k-1].Phase == 1 {
			if k >= 8 {
				put(k-8, "phase 1 ")
			}
			put(k, "▲ phase 2")
		}
	}
	return v.c.styles.muted.Render(chart.PadRight("  round", gutterWidth)) + string(axis)
}

// clusterCaption prints the family's constants, each with its meaning,
// under the charts.
func clusterCaption(ci *experiment.ClusterInfo) string {
	if ci == nil || ci.K == 0 {
		return ""
	}
	parts := make([]string, len(ci.Constants))
	for i, c := range ci.Constants {
		parts[i] = fmt.Sprintf("%s=%.2g: %s", c.Name, c.Value, c.Meaning)
	}
	return strings.Join(parts, "; ")
}
