package tui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/guptarohit/asciigraph"
	"github.com/muesli/termenv"
)

// racerLook is how one racer is drawn: a 256-colour index shared by the chart
// and the legend, and a glyph so that racers stay apart on a monochrome
// projector or under NO_COLOR.
type racerLook struct {
	color asciigraph.AnsiColor
	glyph string
}

var racerLooks = []racerLook{
	{33, "─"}, {208, "•"}, {41, "×"}, {170, "+"}, {220, "o"}, {51, "#"}, {196, "*"}, {250, "~"},
}

const referenceGlyph = "┄"

var referenceColor asciigraph.AnsiColor = 244

func lookOf(i int) racerLook { return racerLooks[i%len(racerLooks)] }

func (l racerLook) charSet() asciigraph.CharSet {
	if l.glyph == "─" {
		return asciigraph.DefaultCharSet
	}
	return asciigraph.CreateCharSet(l.glyph)
}

// styles is built once per program; colour is off under NO_COLOR or on a
// terminal without colour (lipgloss detects both).
type styles struct {
	color                      bool
	title, summary, caption    lipgloss.Style
	status, errorLine, notice  lipgloss.Style
	pickerTitle, cursor, muted lipgloss.Style
	box                        lipgloss.Style
}

func newStyles() styles {
	color := lipgloss.ColorProfile() != termenv.Ascii
	s := styles{
		color:       color,
		title:       lipgloss.NewStyle().Bold(true),
		summary:     lipgloss.NewStyle(),
		caption:     lipgloss.NewStyle().Bold(true),
		status:      lipgloss.NewStyle(),
		errorLine:   lipgloss.NewStyle().Bold(true),
		notice:      lipgloss.NewStyle(),
		pickerTitle: lipgloss.NewStyle().Bold(true),
		cursor:      lipgloss.NewStyle().Bold(true),
		muted:       lipgloss.NewStyle(),
		box:         lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1),
	}
	if color {
		s.title = s.title.Foreground(lipgloss.Color("39"))
		s.summary = s.summary.Foreground(lipgloss.Color("250"))
		s.errorLine = s.errorLine.Foreground(lipgloss.Color("203"))
		s.notice = s.notice.Foreground(lipgloss.Color("114"))
		s.cursor = s.cursor.Foreground(lipgloss.Color("39"))
		s.muted = s.muted.Foreground(lipgloss.Color("244"))
	}
	return s
}

// paint colours text with a racer's 256-colour index when colour is on.
func (s styles) paint(text string, c asciigraph.AnsiColor) string {
	if !s.color {
		return text
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color(itoa(int(c)))).Render(text)
}

var referenceCharSet = asciigraph.CreateCharSet(referenceGlyph)
