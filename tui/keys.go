package tui

import (
	"context"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// action is one key binding of the current view: the keys, what the help
// says it does, and what it does. The help overlay, the hint bar and the
// dispatch all read the same list, so they cannot disagree: a key is shown
// exactly when it acts.
type action struct {
	keys  []string // as tea.KeyMsg.String() spells them; the first is shown
	label string   // how the help names the keys, e.g. "[ ]"; keys[0] when empty
	help  string   // what it does, e.g. "step size η down"
	hint  string   // the short form for the hint bar; not in the bar when empty
	group string   // the help column it belongs to
	run   func() tea.Cmd
}

// name is how the help and the hint bar name the action's keys.
func (a action) name() string {
	if a.label != "" {
		return a.label
	}
	return keyName(a.keys[0])
}

// keyName spells a key for people.
func keyName(k string) string {
	switch k {
	case " ":
		return "space"
	case "left":
		return "←"
	case "right":
		return "→"
	}
	return k
}

// find returns the action bound to a key.
func find(actions []action, key string) (action, bool) {
	for _, a := range actions {
		if slices.Contains(a.keys, key) {
			return a, true
		}
	}
	return action{}, false
}

// hintBar renders the hints of the actions that have one, as many as fit the
// width, the help key last.
func hintBar(st styles, actions []action, w int) string {
	var parts []string
	for _, a := range actions {
		if a.hint != "" {
			parts = append(parts, st.text.Render(a.name())+" "+st.muted.Render(a.hint))
		}
	}
	sep := st.muted.Render(" · ")
	out := ""
	for i, p := range parts {
		next := out
		if i > 0 {
			next += sep
		}
		next += p
		if ansi.StringWidth(next) > w {
			break
		}
		out = next
	}
	return out
}

// helpColumns renders the actions grouped in columns that fit the width: as
// many side by side as fit, else one under the other.
func helpColumns(st styles, actions []action, w int) string {
	cols, widths := helpGroups(st, actions)
	var blocks []string
	for start := 0; start < len(cols); {
		end, total := start, 0
		for end < len(cols) && (end == start || total+3+widths[end] <= w) {
			if end > start {
				total += 3
			}
			total += widths[end]
			end++
		}
		blocks = append(blocks, sideBySide(cols[start:end], widths[start:end], w)...)
		blocks = append(blocks, "")
		start = end
	}
	return strings.TrimRight(strings.Join(blocks, "\n"), "\n")
}

// helpGroups renders each group of actions as a column of lines (its name,
// then "keys  what they do"), and returns each column's width.
func helpGroups(st styles, actions []action) ([][]string, []int) {
	var order []string
	groups := map[string][]action{}
	for _, a := range actions {
		if a.help == "" {
			continue
		}
		if _, ok := groups[a.group]; !ok {
			order = append(order, a.group)
		}
		groups[a.group] = append(groups[a.group], a)
	}
	cols := make([][]string, len(order))
	widths := make([]int, len(order))
	for i, g := range order {
		kw := 0
		for _, a := range groups[g] {
			kw = max(kw, ansi.StringWidth(a.name()))
		}
		if g != "" {
			cols[i] = append(cols[i], st.caption.Render(g))
		}
		for _, a := range groups[g] {
			cols[i] = append(cols[i], st.text.Render(chart.PadRight(a.name(), kw))+"  "+st.muted.Render(a.help))
		}
		for _, l := range cols[i] {
			widths[i] = max(widths[i], ansi.StringWidth(l))
		}
	}
	return cols, widths
}

// sideBySide writes columns next to each other, three spaces apart.
func sideBySide(cols [][]string, widths []int, w int) []string {
	height := 0
	for _, c := range cols {
		height = max(height, len(c))
	}
	var out []string
	for r := 0; r < height; r++ {
		var line strings.Builder
		for i := range cols {
			cell := ""
			if r < len(cols[i]) {
				cell = cols[i][r]
			}
			if i > 0 {
				line.WriteString("   ")
			}
			if i < len(cols)-1 {
				cell = chart.PadRight(cell, widths[i])
			}
			line.WriteString(cell)
		}
		out = append(out, ansi.Truncate(line.String(), w, "…"))
	}
	return out
}

// Key is one binding as the help lists it: how the keys are written, what
// they do and the help column they belong to.
type Key struct{ Keys, Help, Group string }

// Keys lists the keys that act on the explorer's view of sc, as `?` lists
// them there, for `fedscope help PRESET`. It builds the view without
// starting it: nothing is computed.
func Keys(cat *experiment.Catalog, sc experiment.Scenario) []Key {
	m := NewModel(context.Background(), cat, experiment.NewEngine(), sc, WithProfile(termenv.Ascii), WithTheme("mono"))
	var out []Key
	for _, a := range m.actions() {
		out = append(out, Key{Keys: a.name(), Help: a.help, Group: a.group})
	}
	return out
}
