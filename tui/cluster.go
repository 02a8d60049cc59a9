package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

// The cluster view replaces the two charts for the mixture family (DESIGN.md,
// "Cluster panel"): on the left one row per client, grouped by true cluster
// and sampled evenly (largest clients first) to fit the height, one column
// per round, newest on the right, each cell the cluster the client picked in
// that round; on the right the cluster distance and the misclustered
// fraction, with the boundary between Phase 1 and Phase 2 marked. The
// assignments arrive relabelled by the best permutation, so a correct
// clustering reads as solid horizontal bands.

// clusterState is what the cluster view keeps between frames.
type clusterState struct {
	info  *experiment.ClusterInfo
	err   string
	racer int     // the racer whose assignments a single grid shows
	order [][]int // per true cluster: its clients, largest first
}

type clusterInfoMsg struct {
	runID int
	info  experiment.ClusterInfo
	err   error
}

// clusterInfoCmd fetches the labels and sizes of the clients (from the cached
// data the runner prepares) for a mixture run; nil for other families.
func (m *Model) clusterInfoCmd() tea.Cmd {
	if m.sc.Family != experiment.FamilyMixture {
		return nil
	}
	sc, id := m.sc, m.runID
	return func() tea.Msg {
		info, err := experiment.MixtureInfo(sc)
		return clusterInfoMsg{runID: id, info: info, err: err}
	}
}

func (m *Model) onClusterInfo(msg clusterInfoMsg) tea.Cmd {
	if msg.runID != m.runID {
		return nil
	}
	if msg.err != nil {
		m.cluster.err = msg.err.Error()
		m.render()
		return nil
	}
	info := msg.info
	m.cluster.info, m.cluster.err = &info, ""
	m.cluster.order = make([][]int, info.K)
	for i, z := range info.Labels {
		m.cluster.order[z] = append(m.cluster.order[z], i)
	}
	for _, idx := range m.cluster.order {
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(info.Sizes[b], info.Sizes[a]) })
	}
	m.render()
	return nil
}

// deltaLadder holds the separations h/H move through in the mixture family.
var deltaLadder = []float64{0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8}

// stepSeparation moves Δ down or up its ladder, starting from the drawn
// separation when the scenario keeps it, and restarts.
func (m *Model) stepSeparation(up bool) tea.Cmd {
	sc := m.sc
	cur := sc.Mixture.Delta
	if cur == 0 {
		var err error
		if cur, err = sc.TrueSeparation(); err != nil {
			m.notice = err.Error()
			m.render()
			return nil
		}
	}
	next := stepLadder(deltaLadder, cur, up)
	if next == cur {
		m.notice = fmt.Sprintf("Δ=%.3g is already at the end of the ladder", cur)
		m.render()
		return nil
	}
	sc.Mixture.Delta = next
	return m.apply(sc)
}

// nextRacer switches the single assignment grid to the next racer.
func (m *Model) nextRacer() {
	if n := len(m.table.Labels); n > 0 {
		m.cluster.racer = (m.cluster.racer + 1) % n
	}
}

// Cluster looks: a 256-colour index and, for monochrome terminals and
// NO_COLOR, a distinct glyph per cluster.
var (
	clusterColors = []int{39, 214, 78, 170, 226, 45, 203, 252}
	clusterGlyphs = []string{"█", "░", "╳", "≡", "◆", "○", "▲", "#"}
)

const phase1Cell = "·"

func clusterGlyph(z int, color bool) string {
	if color {
		return "█"
	}
	if z < len(clusterGlyphs) {
		return clusterGlyphs[z]
	}
	return strconv.FormatInt(int64(z%36), 36)
}

func sgr(c int) string { return "\x1b[38;5;" + strconv.Itoa(c) + "m" }

const sgrReset = "\x1b[0m"

// clusterView draws the assignment grids on the left and the two charts on
// the right into a w×h box.
func (m *Model) clusterView(w, h int) string {
	cw := max(26, w*9/20)
	gw := w - cw - 1
	left := m.gridsView(gw, h)
	right := m.clusterCharts(cw, h)
	ll, rl := strings.Split(left, "\n"), strings.Split(right, "\n")
	var b strings.Builder
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		l := ll[i]
		b.WriteString(l)
		b.WriteString(strings.Repeat(" ", max(0, gw-ansi.StringWidth(l))+1))
		b.WriteString(rl[i])
	}
	return b.String()
}

// gridsView stacks one grid per racer when each gets enough rows, otherwise
// shows the selected racer's grid (c switches).
func (m *Model) gridsView(w, h int) string {
	ci := m.cluster.info
	switch {
	case m.cluster.err != "":
		return placeholder(w, h, m.cluster.err)
	case ci == nil:
		return placeholder(w, h, "preparing the clients…")
	}
	n := len(m.table.Labels)
	if n == 0 {
		return placeholder(w, h, "no racer")
	}
	if h/n >= 3*ci.K+2 {
		parts := make([]string, n)
		for r := range parts {
			hh := h / n
			if r == n-1 {
				hh = h - (n-1)*(h/n)
			}
			parts[r] = m.gridView(r, w, hh, false)
		}
		return strings.Join(parts, "\n")
	}
	return m.gridView(min(m.cluster.racer, n-1), w, h, n > 1)
}

// gutterWidth holds a cluster's glyph and client count: "█  334 ".
const gutterWidth = 8

// gridView draws one racer's assignments as exactly h lines of w cells: a
// caption, the client rows, and a round axis.
func (m *Model) gridView(racer, w, h int, switchHint bool) string {
	ci := m.cluster.info
	look := lookOf(racer)
	caption := m.styles.paint(look.glyph, look.color) + " " + m.styles.caption.Render(m.table.Labels[racer])
	if switchHint {
		caption += m.styles.muted.Render(" · c: next racer")
	}
	rows := h - 2
	cols := w - gutterWidth
	if rows < ci.K || cols < 4 {
		return fitBox(caption, w, h)
	}
	rs := m.table.Rounds[racer]
	first := max(0, len(rs)-cols)
	shown := rs[first:]
	color := m.styles.color

	lines := []string{ansi.Truncate(caption, w, "…")}
	alloc := allocateRows(ci.K, rows, m.cluster.order)
	var b strings.Builder
	for z, r := range alloc {
		members := m.cluster.order[z]
		for q := 0; q < r; q++ {
			b.Reset()
			if q == 0 {
				g := clusterGlyph(z, color)
				if color {
					g = sgr(clusterColors[z%len(clusterColors)]) + g + sgrReset
				}
				fmt.Fprintf(&b, "%s %5d ", g, len(members))
			} else {
				b.WriteString(strings.Repeat(" ", gutterWidth))
			}
			client := members[min(len(members)-1, int((float64(q)+0.5)*float64(len(members))/float64(r)))]
			writeCells(&b, shown, client, color)
			lines = append(lines, b.String())
		}
	}
	lines = append(lines, m.gridAxis(shown, cols))
	return fitBox(strings.Join(lines, "\n"), w, h)
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

// writeCells appends one client's row: a cell per shown round, colour runs
// written once per run so that a frame stays cheap.
func writeCells(b *strings.Builder, shown []algorithms.Round, client int, color bool) {
	cur := -2
	for k := range shown {
		a := shown[k].Assign
		z := -1
		if client < len(a) {
			z = a[client]
		}
		if color && z != cur {
			if z < 0 {
				b.WriteString(sgr(240))
			} else {
				b.WriteString(sgr(clusterColors[z%len(clusterColors)]))
			}
			cur = z
		}
		if z < 0 {
			b.WriteString(phase1Cell)
		} else {
			b.WriteString(clusterGlyph(z, color))
		}
	}
	if color && cur != -2 {
		b.WriteString(sgrReset)
	}
}

// gridAxis labels the first and last shown rounds and marks where Phase 2
// starts.
func (m *Model) gridAxis(shown []algorithms.Round, cols int) string {
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
	return m.styles.muted.Render(ansi.Truncate("  round ", gutterWidth, "")) + string(axis)
}

// clusterCharts draws the cluster distance (log, with the 0.1·Δ target) above
// the misclustered fraction (linear), both with the phase boundary marked.
func (m *Model) clusterCharts(w, h int) string {
	h1 := (h - 2 - 2) / 2
	h2 := h - 2 - h1
	n := len(m.table.Labels)
	dist, mis := make([]series, n), make([]series, n)
	var marks []float64
	for i := range m.table.Labels {
		look := lookOf(i)
		rs := m.table.Rounds[i]
		d, f := make([]float64, len(rs)), make([]float64, len(rs))
		for k, r := range rs {
			d[k], f[k] = r.ClusterDist, r.Misclustered
			if k > 0 && r.Phase == 2 && rs[k-1].Phase == 1 {
				marks = append(marks, float64(r.Index)-0.5)
			}
		}
		dist[i] = series{values: d, glyph: look.charSet(), color: look.color}
		mis[i] = series{values: f, glyph: look.charSet(), color: look.color}
	}
	if len(marks) == 0 && m.cluster.info != nil && m.cluster.info.Phase1Rounds < m.sc.Rounds {
		marks = []float64{float64(m.cluster.info.Phase1Rounds) + 0.5}
	}
	spec := chartSpec{width: w, rounds: m.sc.Rounds, logY: m.logY, color: m.styles.color, marks: marks}
	top, bottom := spec, spec
	top.height, top.curves = h1, dist
	bottom.height, bottom.curves, bottom.xAxis, bottom.logY = h2, mis, true, false
	capTop := m.styles.caption.Render("cluster distance")
	capBottom := m.styles.caption.Render("misclustered")
	if ci := m.cluster.info; ci != nil {
		target := 0.1 * ci.Delta
		vals := make([]float64, m.sc.Rounds)
		for k := range vals {
			vals[k] = target
		}
		top.reference = &series{values: vals, glyph: referenceCharSet, color: referenceColor}
		capTop += m.styles.muted.Render(fmt.Sprintf(" %s 0.1Δ=%.2g", referenceGlyph, target))
		capBottom += m.styles.muted.Render(fmt.Sprintf(" γ=%.2g κ=%.2g", ci.Gamma, ci.Kappa))
	}
	capBottom += m.styles.muted.Render(" " + markGlyph + " phase 2")
	return strings.Join([]string{
		ansi.Truncate(capTop, w, "…"), plotChart(top),
		ansi.Truncate(capBottom, w, "…"), plotChart(bottom),
	}, "\n")
}

// clusterKeys is the key map as the mixture family reads it: h/H move Δ and
// c switches the assignment grid.
type clusterKeys struct{ keyMap }

func (k clusterKeys) ShortHelp() []key.Binding {
	pair := func(keys, desc string, b key.Binding) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(keys, desc))
	}
	return []key.Binding{
		pair("space", "pause", k.Pause), pair("r", "restart", k.Restart), pair("[ ]", "η", k.EtaUp),
		pair("- +", "steps", k.StepsUp), pair("h H", "Δ", k.HeteroUp), pair("c", "racer", k.NextRacer),
		pair("?", "more", k.Help), k.Quit,
	}
}

func (k clusterKeys) FullHelp() [][]key.Binding {
	relabel := func(b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	}
	return [][]key.Binding{
		{k.Pause, k.Restart, k.NewSeed, k.Log, k.Export},
		{k.EtaDown, k.EtaUp, k.StepsDown, k.StepsUp},
		{relabel(k.HeteroDown, "separation Δ down (harder)"), relabel(k.HeteroUp, "separation Δ up (easier)"), k.NextRacer},
		{k.Presets, k.Help, k.Quit},
	}
}

// helpKeys is the key map the help shows for the current family.
func (m *Model) helpKeys() help.KeyMap {
	km := m.keys
	relabel := func(b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	}
	switch m.sc.Family {
	case experiment.FamilyMixture:
		return clusterKeys{m.keys}
	case experiment.FamilyNewton:
		km.heteroName = "α"
		km.HeteroDown = relabel(km.HeteroDown, "data heterogeneity α down")
		km.HeteroUp = relabel(km.HeteroUp, "data heterogeneity α up")
	case experiment.FamilyLowRank:
		km.heteroName = "rank"
		km.HeteroDown = relabel(km.HeteroDown, "FedLRGD rank r down")
		km.HeteroUp = relabel(km.HeteroUp, "FedLRGD rank r up")
	}
	return km
}
