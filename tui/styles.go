package tui

import (
	"hash/fnv"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// theme is a set of colours chosen for one background: every text colour
// reaches 4.5:1 contrast against it and every racer colour 3:1 (a test
// computes the ratios, contrast_test.go), so the charts read on a projector.
type theme struct {
	name       string
	background string // the background the contrasts are computed against
	text       string // body text
	muted      string // captions' notes, hints
	accent     string // the title, the picker cursor
	errorText  string
	notice     string
	axis       string   // labels, axes, reference lines
	racers     []string // one per look
	clusters   []string // the cluster view's cells
}

// themes lists the themes T cycles through.
var themes = []theme{
	{
		name: "dark", background: "#000000", text: "#e4e4e4", muted: "#a8a8a8", accent: "#5fafff",
		errorText: "#ff5f5f", notice: "#87d787", axis: "#9e9e9e",
		racers:   []string{"#0087ff", "#ff8700", "#00d75f", "#d75fd7", "#ffd700", "#00ffff", "#ff5f5f", "#bcbcbc"},
		clusters: []string{"#00afff", "#ffaf00", "#5fd787", "#d75fd7", "#ffff00", "#00d7ff", "#ff5f5f", "#d0d0d0"},
	},
	{
		name: "light", background: "#ffffff", text: "#1c1c1c", muted: "#4e4e4e", accent: "#005faf",
		errorText: "#af0000", notice: "#005f00", axis: "#585858",
		racers:   []string{"#0050c8", "#b35900", "#007a33", "#a0009c", "#7a6500", "#007b8a", "#c8001e", "#5a5a5a"},
		clusters: []string{"#0050c8", "#b35900", "#007a33", "#a0009c", "#7a6500", "#007b8a", "#c8001e", "#4e4e4e"},
	},
	{name: "mono"},
}

// look is how one racer is drawn: a glyph (so that racers stay apart on a
// monochrome projector or under NO_COLOR) and a colour slot of the theme.
type look struct {
	glyph rune
	color int
}

// glyphs are the racers' glyphs; chart.LineGlyph draws with asciigraph's box
// characters.
var glyphs = []rune{chart.LineGlyph, '•', '×', '+', 'o', '#', '*', '~', '%', '@', '=', '^'}

// Glyphs of the chart furniture.
const (
	referenceGlyph = '┄' // a reference level (pooled least squares)
	theoryGlyph    = '╌' // a paper's prediction
	boundGlyph     = '┈' // a racer's bound (paper 002)
	sharedGlyph    = '◆' // a cell where two racers' points coincide
	spreadGlyph    = '·' // a sweep's second statistic (the median)
)

// looksOf assigns looks from the racers' identities, not their positions:
// adding or removing a racer never changes another's look. A racer's look
// is the well-known one its family fixes (Family.Looks), or one derived from
// a hash of its spec; if two racers of the list want the same look, the one
// whose spec sorts later moves to the next free look.
func looksOf(specs []experiment.RacerSpec, wellKnown map[string]int) []look {
	type want struct {
		id   string
		slot int
		i    int
	}
	ws := make([]want, len(specs))
	for i, s := range specs {
		id := s.String()
		slot, ok := wellKnown[id]
		if !ok {
			h := fnv.New32a()
			h.Write([]byte(id))
			slot = int(h.Sum32() % uint32(len(glyphs)))
		}
		ws[i] = want{id, slot, i}
	}
	order := slices.Clone(ws)
	slices.SortStableFunc(order, func(a, b want) int { return strings.Compare(a.id, b.id) })
	taken := map[int]bool{}
	out := make([]look, len(specs))
	// Well-known racers first, so that a hashed newcomer never displaces one.
	for pass := 0; pass < 2; pass++ {
		for _, w := range order {
			_, known := wellKnown[w.id]
			if known != (pass == 0) {
				continue
			}
			slot := w.slot
			for taken[slot] && len(taken) < len(glyphs) {
				slot = (slot + 1) % len(glyphs)
			}
			taken[slot] = true
			out[w.i] = look{glyph: glyphs[slot], color: slot}
		}
	}
	return out
}

// styles is built once per theme and colour profile.
type styles struct {
	theme   theme
	color   bool // ANSI colours on (off under NO_COLOR, without colour, or in mono)
	profile termenv.Profile

	title, summary, caption   lipgloss.Style
	status, errorLine, notice lipgloss.Style
	pickerTitle, cursor       lipgloss.Style
	muted, text, dim          lipgloss.Style

	axisSGR    string   // chart labels and axes
	racerSGR   []string // per look colour
	clusterSGR []string
}

// newStyles builds the styles of a theme for a colour profile.
func newStyles(t theme, profile termenv.Profile) styles {
	s := styles{theme: t, profile: profile, color: profile != termenv.Ascii && t.name != "mono"}
	s.title = lipgloss.NewStyle().Bold(true)
	s.caption = lipgloss.NewStyle().Bold(true)
	s.errorLine = lipgloss.NewStyle().Bold(true)
	s.pickerTitle = lipgloss.NewStyle().Bold(true)
	s.cursor = lipgloss.NewStyle().Bold(true)
	s.dim = lipgloss.NewStyle().Faint(true)
	if !s.color {
		return s
	}
	fg := func(hex string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(hex)) }
	s.title = s.title.Foreground(lipgloss.Color(t.accent))
	s.summary = fg(t.text)
	s.text = fg(t.text)
	s.caption = s.caption.Foreground(lipgloss.Color(t.text))
	s.status = fg(t.text)
	s.errorLine = s.errorLine.Foreground(lipgloss.Color(t.errorText))
	s.notice = fg(t.notice)
	s.pickerTitle = s.pickerTitle.Foreground(lipgloss.Color(t.accent))
	s.cursor = s.cursor.Foreground(lipgloss.Color(t.accent))
	s.muted = fg(t.muted)
	s.dim = fg(t.muted).Faint(true)
	s.axisSGR = s.sgr(t.axis)
	for _, c := range t.racers {
		s.racerSGR = append(s.racerSGR, s.sgr(c))
	}
	for _, c := range t.clusters {
		s.clusterSGR = append(s.clusterSGR, s.sgr(c))
	}
	return s
}

// sgr returns the SGR parameters of a foreground colour in the profile.
func (s styles) sgr(hex string) string {
	return s.profile.Color(hex).Sequence(false)
}

// racerColor returns the SGR colour of a look ("" without colour).
func (s styles) racerColor(l look) string {
	if !s.color || len(s.racerSGR) == 0 {
		return ""
	}
	return s.racerSGR[l.color%len(s.racerSGR)]
}

// paint colours text with an SGR colour.
func (s styles) paint(text, sgr string) string {
	if !s.color || sgr == "" {
		return text
	}
	return "\x1b[" + sgr + "m" + text + "\x1b[0m"
}

// axis is the SGR colour of chart furniture ("" without colour).
func (s styles) axis() string {
	if !s.color {
		return ""
	}
	return s.axisSGR
}
