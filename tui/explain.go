package tui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/experiment"
)

// storyMinWidth is the narrowest terminal that shows the story beside the
// charts; narrower ones show it in the help.
const storyMinWidth = 100

// story is the family's explanation of the scenario, or "".
func story(sc experiment.Scenario) string { return sc.Family.Story(sc) }

// withStory draws body into w×h, with the story in a panel on the right
// when it is on and the terminal has room.
func withStory(c *common, sc experiment.Scenario, w, h int, body func(w, h int) string) string {
	text := story(sc)
	if !c.story || text == "" || w < storyMinWidth {
		return body(w, h)
	}
	pw := min(max(w/4, 28), 44)
	left := body(w-pw-2, h)
	st := c.styles
	panel := strings.Split(ansi.Wrap(st.muted.Render(text), pw, " "), "\n")
	panel = append([]string{st.caption.Render("What to look for") + st.muted.Render(" (i hides)")}, panel...)
	ll := strings.Split(left, "\n")
	var b strings.Builder
	for i := 0; i < h; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		l := ""
		if i < len(ll) {
			l = ll[i]
		}
		b.WriteString(padRight(l, w-pw-2) + "  ")
		if i < len(panel) {
			b.WriteString(panel[i])
		}
	}
	return b.String()
}

// withStory is withStory for the race's scenario.
func (r *race) withStory(w, h int, body func(w, h int) string) string {
	return withStory(r.c, r.sc, w, h, body)
}

// explainActions are the keys of the explanations: the story and the theory
// overlays.
func (r *race) explainActions() []action {
	return explainActions(r.c, r.sc, r.hasTheory())
}

// explainActions are the keys i (story) and t (theory overlays) where they
// act.
func explainActions(c *common, sc experiment.Scenario, theory bool) []action {
	var out []action
	if story(sc) != "" {
		out = append(out, action{keys: []string{"i"}, help: "story beside the charts (≥ 100 columns; always in this help)", hint: "story", group: "view",
			run: func() tea.Cmd {
				c.story = !c.story
				c.version++
				if c.story && c.width < storyMinWidth {
					c.notice = fmt.Sprintf("the story needs %d columns; ? shows it", storyMinWidth)
				}
				return nil
			}})
	}
	if theory {
		out = append(out, action{keys: []string{"t"}, help: "theory overlays of the papers (dashed, named beside the chart)", hint: "theory", group: "view",
			run: func() tea.Cmd { c.theory = !c.theory; c.version++; return nil }})
	}
	return out
}

// hasTheory reports whether the scenario has predictions to draw.
func (r *race) hasTheory() bool {
	for _, l := range r.facts.Levels {
		if l.Theory {
			return true
		}
	}
	for _, m := range r.table.Metrics {
		if m.Bound != "" {
			return true
		}
	}
	return false
}

// exportWith writes an export: a CSV with write, and its JSON sidecar, named
// after the preset, the seed and the keys that differ from the preset.
func exportWith(c *common, sc experiment.Scenario, rows int, partial bool, upTo int, write func(io.Writer) error) tea.Cmd {
	args := c.catalog.Command(sc)
	base := exportName(sc, args)
	sidecar := map[string]any{
		"command": "fedscope " + experiment.Quote(args),
		"version": c.release,
		"preset":  sc.Preset,
		"seed":    sc.Seed,
		"partial": partial,
		"knobs":   knobValues(sc),
	}
	if partial {
		sidecar["rounds_exported"] = upTo
	}
	return func() tea.Msg {
		// A new file beside the working directory, never over an existing
		// one; where the directory cannot be written (a read-only checkout
		// on stage), the temporary directory instead.
		path, err := experiment.ExportNew(base, ".csv", write)
		if err != nil {
			if p, terr := experiment.ExportNew(filepath.Join(os.TempDir(), base), ".csv", write); terr == nil {
				path, err = p, nil
			} else {
				return exportedMsg{err: err}
			}
		}
		side := strings.TrimSuffix(path, ".csv") + ".json"
		b, _ := json.MarshalIndent(sidecar, "", "  ")
		f, err := os.OpenFile(side, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = f.Write(append(b, '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		return exportedMsg{path: path, sidecar: side, rows: rows, partial: partial, err: err}
	}
}

// knobValues lists every key of the scenario with its value.
func knobValues(sc experiment.Scenario) map[string]string {
	out := map[string]string{}
	for _, k := range sc.Knobs() {
		out[k.Name] = k.Get(sc)
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=+-]+`)

// exportName is fedscope-<preset>-seed<S>[-<key><value>…] from the command
// line that reproduces the scenario.
func exportName(sc experiment.Scenario, args []string) string {
	parts := []string{"fedscope", sc.Preset, fmt.Sprintf("seed%d", sc.Seed)}
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--set":
			k, v, _ := strings.Cut(args[i+1], "=")
			parts = append(parts, k+v)
			i++
		case "--rounds":
			parts = append(parts, "rounds"+args[i+1])
			i++
		}
	}
	name := unsafeName.ReplaceAllString(strings.Join(parts, "-"), "_")
	if len(name) > 120 {
		name = name[:120]
	}
	return name
}
