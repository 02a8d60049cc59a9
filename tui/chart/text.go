package chart

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// FitBox pads or cuts text to exactly h lines of at most w cells.
func FitBox(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:max(h, 0)]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, max(w, 0), "")
		}
	}
	return strings.Join(lines, "\n")
}

// Placeholder is an empty w×h box with a message in its middle line.
func Placeholder(w, h int, msg string) string {
	lines := make([]string, max(h, 0))
	if h > 0 {
		lines[h/2] = ansi.Truncate(PadLeft(msg, (w+ansi.StringWidth(msg))/2), max(w, 0), "")
	}
	return strings.Join(lines, "\n")
}

// PadLeft right-aligns s in w cells.
func PadLeft(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// PadRight left-aligns s in w cells (escape sequences take no cells).
func PadRight(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}
