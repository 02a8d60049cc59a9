package tui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// keyMap holds every binding of the run view (DESIGN.md, "The run view").
type keyMap struct {
	Pause, Restart, NewSeed          key.Binding
	EtaDown, EtaUp                   key.Binding
	StepsDown, StepsUp               key.Binding
	HeteroDown, HeteroUp             key.Binding
	heteroName                       string // what h/H change, for the short help: Γ, α, r
	SubspaceDown, SubspaceUp         key.Binding
	BatchDown, BatchUp               key.Binding
	Algorithms, Presets, Export, Log key.Binding
	OracleX, Data                    key.Binding
	NextRacer                        key.Binding // cluster view: the racer whose assignments show
	Help, Quit                       key.Binding
}

func defaultKeyMap() keyMap {
	return keyMap{
		Pause:        key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "pause/resume")),
		Restart:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart")),
		NewSeed:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new seed")),
		EtaDown:      key.NewBinding(key.WithKeys("["), key.WithHelp("[", "η down")),
		EtaUp:        key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "η up")),
		StepsDown:    key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "local steps down")),
		StepsUp:      key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "local steps up")),
		heteroName:   "Γ",
		HeteroDown:   key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "heterogeneity Γ down")),
		HeteroUp:     key.NewBinding(key.WithKeys("H"), key.WithHelp("H", "heterogeneity Γ up")),
		SubspaceDown: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "subspace r down")),
		SubspaceUp:   key.NewBinding(key.WithKeys("O"), key.WithHelp("O", "subspace r up")),
		BatchDown:    key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "smaller minibatch")),
		BatchUp:      key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "larger minibatch")),
		Algorithms:   key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "algorithms")),
		Presets:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "presets")),
		Export:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export CSV")),
		Log:          key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "log/linear y")),
		OracleX:      key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "x axis: rounds/oracle (lowrank)")),
		Data:         key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "race on a data file")),
		NextRacer:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "assignments of the next racer")),
		Help:         key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:         key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp is the one-line reminder under the charts; pairs of keys share
// an entry so that it fits in 80 columns.
func (k keyMap) ShortHelp() []key.Binding {
	pair := func(keys, desc string, b key.Binding) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(keys, desc))
	}
	return []key.Binding{
		pair("space", "pause", k.Pause), pair("r", "restart", k.Restart), pair("[ ]", "η", k.EtaUp),
		pair("- +", "steps", k.StepsUp), pair("h H", k.heteroName, k.HeteroUp),
		pair("?", "more keys", k.Help), k.Quit,
	}
}

// FullHelp is the help overlay, in columns.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Pause, k.Restart, k.NewSeed, k.Log, k.Export},
		{k.EtaDown, k.EtaUp, k.StepsDown, k.StepsUp},
		{k.HeteroDown, k.HeteroUp, k.SubspaceDown, k.SubspaceUp, k.BatchDown, k.BatchUp},
		{k.Algorithms, k.Presets, k.Data, k.OracleX, k.Help, k.Quit},
	}
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

// fullHelpView renders a key map's full help in as many columns as fit the
// width: bubbles/help drops whole columns that do not fit, so the bindings
// are regrouped into fewer, longer columns instead.
func fullHelpView(h help.Model, km help.KeyMap, width int) string {
	groups := km.FullHelp()
	h.Width = 0 // measure untruncated
	view := h.FullHelpView(groups)
	if lipgloss.Width(view) <= width {
		return view
	}
	var all []key.Binding
	for _, g := range groups {
		for _, b := range g {
			if b.Enabled() {
				all = append(all, b)
			}
		}
	}
	for cols := len(groups) - 1; cols >= 1; cols-- {
		rows := (len(all) + cols - 1) / cols
		var regrouped [][]key.Binding
		for i := 0; i < len(all); i += rows {
			regrouped = append(regrouped, all[i:min(i+rows, len(all))])
		}
		if view = h.FullHelpView(regrouped); lipgloss.Width(view) <= width {
			break
		}
	}
	return view
}
