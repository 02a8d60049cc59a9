package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/tui/chart"
)

// prompt asks for the path of a data file to race on.
type prompt struct {
	input textinput.Model
	err   string
}

func newPrompt(current string) prompt {
	ti := textinput.New()
	ti.Prompt = "data file: "
	ti.Placeholder = "path to a LIBSVM or .csv file"
	ti.CharLimit = 4096
	ti.SetValue(current)
	ti.Cursor.SetMode(cursor.CursorStatic) // no blink ticks
	ti.Focus()
	return prompt{input: ti}
}

// update handles a key: enter returns the path (done), esc returns "" (done).
func (p *prompt) update(msg tea.KeyMsg) (path string, done bool, cmd tea.Cmd) {
	switch msg.String() {
	case "esc":
		return "", true, nil
	case "enter":
		path = strings.TrimSpace(p.input.Value())
		if path == "" {
			p.err = "type the path of a data file, or esc to cancel"
			return "", false, nil
		}
		return path, true, nil
	}
	p.input, cmd = p.input.Update(msg)
	p.err = ""
	return "", false, cmd
}

func (p prompt) view(st styles, w, h int) string {
	p.input.Width = max(10, w-len(p.input.Prompt)-2)
	lines := []string{
		st.pickerTitle.Render("Race on your own data"), "",
		"A LIBSVM file (label index:value …) or a .csv file (label first; a header line",
		"of names is skipped). Features are scaled to [0,1] on the training part, 20 %",
		"is held out for testing, 2000 random Fourier features, bandwidth from the",
		"median distance, λ = 1e-4. Racers: KRR, DKRR, FedNewton, FedAvg, FedProx.", "",
		p.input.View(), "",
	}
	if p.err != "" {
		lines = append(lines, strings.Split(ansi.Wrap(st.errorLine.Render(p.err), w, " /"), "\n")...)
	} else {
		lines = append(lines, st.muted.Render("enter load · esc cancel"))
	}
	return chart.FitBox(strings.Join(lines, "\n"), w, h)
}
