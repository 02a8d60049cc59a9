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

	"github.com/fedscope/fedscope/experiment"
)

// story is the family's explanation of the scenario, or "".
func story(sc experiment.Scenario) string { return sc.Family.Story(sc) }

// caption is the story in a sentence or two, for screens where no side
// panel fits: the family's own caption, else the story's first sentence.
func caption(sc experiment.Scenario) string {
	if c, ok := sc.Family.(interface {
		Caption(experiment.Scenario) string
	}); ok {
		return c.Caption(sc)
	}
	s := story(sc)
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// explain puts the words of the screen into a layout: a lesson's step, or
// the story (side panel) and its caption, unless i hid them.
func (c *common) explain(l *layout, sc experiment.Scenario) {
	if !c.story {
		return
	}
	if c.lesson != nil {
		c.lesson.explain(l)
		return
	}
	l.panel = "What to look for (i hides)"
	l.story = story(sc)
	l.caption = caption(sc)
	l.capLines = 2
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
		out = append(out, action{keys: []string{"i"}, help: "the story: beside the charts where they keep their width, else a caption under them (always in this help)", hint: "story", group: "view",
			run: func() tea.Cmd {
				c.story = !c.story
				c.version++
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
func exportWith(c *common, sc experiment.Scenario, rows int, partial bool, upTo int, hidden []string, write func(io.Writer) error) tea.Cmd {
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
	if len(hidden) > 0 {
		sidecar["hidden_racers_left_out"] = hidden
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
		return exportedMsg{path: path, sidecar: side, rows: rows, partial: partial, hidden: hidden, err: err}
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
