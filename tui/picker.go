package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// pickItem is one line of a picker.
type pickItem struct {
	label, desc string
	checked     bool
	racer       experiment.RacerSpec // algorithm picker
	preset      string               // preset picker
}

// picker is a small list: multi-select with checkboxes (algorithms) or
// single-select (presets). It is hand-rolled because bubbles/list brings
// filtering, pagination and a delegate API that two short fixed lists do not
// need, and its default chrome does not fit 80×24 beside the status lines.
type picker struct {
	title  string
	items  []pickItem
	cursor int
	multi  bool
	keys   pickerKeys
	err    string
}

// pickerResult is what a picker returns when it closes.
type pickerResult int

const (
	pickerOpen pickerResult = iota
	pickerApplied
	pickerCancelled
)

func (p picker) update(msg tea.KeyMsg) (picker, pickerResult) {
	switch {
	case key.Matches(msg, p.keys.Up):
		p.cursor = (p.cursor - 1 + len(p.items)) % len(p.items)
	case key.Matches(msg, p.keys.Down):
		p.cursor = (p.cursor + 1) % len(p.items)
	case key.Matches(msg, p.keys.Toggle) && p.multi:
		p.items[p.cursor].checked = !p.items[p.cursor].checked
		p.err = ""
	case key.Matches(msg, p.keys.Apply):
		if p.multi && len(p.checked()) == 0 {
			p.err = "pick at least one algorithm"
			return p, pickerOpen
		}
		return p, pickerApplied
	case key.Matches(msg, p.keys.Cancel):
		return p, pickerCancelled
	}
	return p, pickerOpen
}

func (p picker) checked() []pickItem {
	var out []pickItem
	for _, it := range p.items {
		if it.checked {
			out = append(out, it)
		}
	}
	return out
}

func (p picker) view(st styles, w, h int) string {
	var b strings.Builder
	b.WriteString(st.pickerTitle.Render(p.title) + "\n\n")
	// Scroll so the cursor stays visible in the h−4 rows available.
	rows := max(h-4, 1)
	first := max(0, min(p.cursor-rows+1, len(p.items)-rows))
	labelWidth := 0
	for _, it := range p.items {
		labelWidth = max(labelWidth, ansi.StringWidth(it.label))
	}
	for i := first; i < len(p.items) && i < first+rows; i++ {
		it := p.items[i]
		mark := "  "
		if i == p.cursor {
			mark = st.cursor.Render("> ")
		}
		box := ""
		if p.multi {
			box = "[ ] "
			if it.checked {
				box = "[x] "
			}
		}
		line := mark + box + it.label
		if it.desc != "" {
			line += strings.Repeat(" ", labelWidth-ansi.StringWidth(it.label)+2) + st.muted.Render(it.desc)
		}
		b.WriteString(ansi.Truncate(line, w, "…") + "\n")
	}
	hint := "↑/↓ move · enter apply · esc cancel"
	if p.multi {
		hint = "↑/↓ move · space toggle · enter apply · esc cancel"
	}
	b.WriteString("\n")
	if p.err != "" {
		b.WriteString(st.errorLine.Render(p.err))
	} else {
		b.WriteString(st.muted.Render(hint))
	}
	return chart.FitBox(b.String(), w, h)
}

// algorithmPicker offers the racers the family suggests (its Menu) plus
// whatever the current scenario already races.
func algorithmPicker(sc experiment.Scenario) picker {
	cands := sc.Family.Menu(sc)
	current := racersOf(sc)
	var items []pickItem
	seen := map[string]bool{}
	add := func(spec experiment.RacerSpec, desc string, checked bool) {
		id := spec.String()
		if seen[id] {
			return
		}
		seen[id] = true
		label := id
		one := sc
		if err := one.Set("algorithms", id); err == nil {
			if rs := one.Racers(); len(rs) == 1 {
				label = rs[0].Label
			}
		}
		if _, pinned := firstOpt(spec); !pinned && desc == "" {
			desc = "follows the scenario's parameters"
		}
		items = append(items, pickItem{label: label, desc: desc, racer: spec, checked: checked})
	}
	for _, r := range cands {
		add(r, "", slices.ContainsFunc(current, r.Equal))
	}
	for _, r := range current {
		add(r, "from --set", true)
	}
	return picker{title: "Algorithms to race", items: items, multi: true, keys: defaultPickerKeys()}
}

// racersOf returns the racer specs of a scenario.
func racersOf(sc experiment.Scenario) []experiment.RacerSpec {
	var out []experiment.RacerSpec
	for _, r := range sc.Racers() {
		out = append(out, r.Spec)
	}
	return out
}

func firstOpt(s experiment.RacerSpec) (experiment.RacerOpt, bool) {
	if len(s.Opts) == 0 {
		return experiment.RacerOpt{}, false
	}
	return s.Opts[0], true
}

func presetPicker(cat *experiment.Catalog, current string) picker {
	p := picker{title: "Presets", keys: defaultPickerKeys()}
	for i, pr := range cat.Presets() {
		p.items = append(p.items, pickItem{label: pr.Name, desc: pr.Summary, preset: pr.Name})
		if pr.Name == current {
			p.cursor = i
		}
	}
	return p
}

// pickerKeys drive the algorithm and preset pickers.
type pickerKeys struct {
	Up, Down, Toggle, Apply, Cancel key.Binding
}

func defaultPickerKeys() pickerKeys {
	return pickerKeys{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Toggle: key.NewBinding(key.WithKeys(" ", "x"), key.WithHelp("space", "toggle")),
		Apply:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
		Cancel: key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc", "cancel")),
	}
}
