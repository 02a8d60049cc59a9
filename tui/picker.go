package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/experiment"
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
	return fitBox(b.String(), w, h)
}

// algorithmPicker offers the racers of the paper's figures plus whatever the
// current scenario already races.
func algorithmPicker(sc experiment.Scenario) picker {
	follow := experiment.RacerSpec{Kind: experiment.KindFedAvg, Batch: -1}
	candidates := []pickItem{
		{label: "FedAvg s=1", desc: "with full batches: centralised gradient descent", racer: experiment.RacerSpec{Kind: experiment.KindFedAvg, LocalSteps: 1, Batch: -1}},
		{label: "FedAvg s=2", racer: experiment.RacerSpec{Kind: experiment.KindFedAvg, LocalSteps: 2, Batch: -1}},
		{label: "FedAvg s=5", racer: experiment.RacerSpec{Kind: experiment.KindFedAvg, LocalSteps: 5, Batch: -1}},
		{label: "FedAvg s=20", racer: experiment.RacerSpec{Kind: experiment.KindFedAvg, LocalSteps: 20, Batch: -1}},
		{label: fmt.Sprintf("FedAvg s=%d", sc.LocalSteps), desc: "follows local_steps (−/+)", racer: follow},
		{label: "FedProx", desc: "exact proximal local step", racer: experiment.RacerSpec{Kind: experiment.KindFedProx, Batch: -1}},
	}
	for _, r := range sc.Racers {
		found := false
		for i := range candidates {
			if candidates[i].racer == r {
				candidates[i].checked, found = true, true
			}
		}
		if !found {
			candidates = append(candidates, pickItem{label: r.String(), desc: "from --set", racer: r, checked: true})
		}
	}
	return picker{title: "Algorithms to race", items: candidates, multi: true, keys: defaultPickerKeys()}
}

func presetPicker(current string) picker {
	p := picker{title: "Presets", keys: defaultPickerKeys()}
	for i, pr := range experiment.Presets() {
		p.items = append(p.items, pickItem{label: pr.Name, desc: pr.Summary, preset: pr.Name})
		if pr.Name == current {
			p.cursor = i
		}
	}
	return p
}
