package tui

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fedscope/fedscope/experiment"
)

// raceActions are the keys of the race views: playback, cursor, racers,
// restarts, and the live knobs of the scenario. A key that cannot act in
// the current state still acts: it says why it does nothing.
func (r *race) raceActions(restart func(experiment.Scenario) tea.Cmd) []action {
	out := []action{
		{keys: []string{" "}, help: "pause / resume the playback", hint: "pause", group: "playback", run: r.togglePause},
		{keys: []string{"."}, help: "one more round (pauses)", group: "playback", run: r.stepOne},
		{keys: []string{"<", ","}, label: "< >", help: "playback slower / faster (" + paceNames() + ")", hint: "pace", group: "playback",
			run: func() tea.Cmd { return r.setPace(false) }},
		{keys: []string{">"}, help: "", group: "playback", run: func() tea.Cmd { return r.setPace(true) }},
		{keys: []string{"left"}, label: "← →", help: "round cursor back / forward", hint: "cursor", group: "playback",
			run: func() tea.Cmd { r.moveCursor(r.cursorRound() - 1); return nil }},
		{keys: []string{"right"}, help: "", group: "playback", run: func() tea.Cmd { r.moveCursor(r.cursorRound() + 1); return nil }},
		{keys: []string{"home"}, label: "home end", help: "cursor to the first / newest round", group: "playback",
			run: func() tea.Cmd { r.moveCursor(1); return nil }},
		{keys: []string{"end"}, help: "", group: "playback", run: func() tea.Cmd { r.moveCursor(r.revealed); return nil }},
	}
	out = append(out, toggleActions(r.c, len(r.specs), "racer", "racers", r.toggleRacer)...)
	out = append(out,
		action{keys: []string{"r"}, help: "restart", hint: "restart", group: "run", run: func() tea.Cmd { return restart(r.sc) }},
		action{keys: []string{"n"}, help: "new seed", group: "run", run: func() tea.Cmd {
			sc := r.sc
			sc.Seed++
			return restart(sc)
		}},
		action{keys: []string{"e"}, help: "export the rounds and racers shown as CSV", group: "run", run: r.export},
	)
	return append(out, liveActions(r.c, r.sc, "", func(sc experiment.Scenario) tea.Cmd {
		r.version++
		return restart(sc)
	})...)
}

// toggleActions are the keys 1–9 that show and hide the things of a view
// (racers, curves); beyond their number a key says so.
func toggleActions(c *common, n int, noun, group string, toggle func(i int)) []action {
	var out []action
	for i := 0; i < 9; i++ {
		a := action{keys: []string{strconv.Itoa(i + 1)}, group: group, run: func() tea.Cmd {
			if i >= n {
				c.notice = fmt.Sprintf("%d shows / hides %s %d: there %s %d %s%s here", i+1, noun, i+1, isAre(n), n, noun, plural(n))
				return nil
			}
			toggle(i)
			return nil
		}}
		if i == 0 && n > 1 {
			a.label, a.help = "1-"+strconv.Itoa(min(n, 9)), "show / hide "+noun+" i (hidden ones dim in the legend)"
		}
		out = append(out, a)
	}
	return out
}

// tabAction is the key that shows the next chart when they do not all fit
// (stacked says whether they do), or says that it has nothing to do.
func tabAction(c *common, stacked func() bool, next func()) action {
	return action{keys: []string{"tab"}, help: "next chart (when they do not all fit)", hint: "next chart", group: "view",
		run: func() tea.Cmd {
			if stacked() {
				c.notice = "tab shows the next chart when they do not all fit: all are shown"
				return nil
			}
			next()
			return nil
		}}
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// liveActions are the keys of a scenario's live knobs, each with the keys
// its family gave it, for every view (the run, cluster and sweep views
// share them; skip names a knob that is not live here, the swept one). A
// step that changes nothing says why instead of restarting.
func liveActions(c *common, sc experiment.Scenario, skip string, restart func(experiment.Scenario) tea.Cmd) []action {
	var out []action
	for _, k := range sc.Knobs() {
		if k.Live == nil || k.Name == skip {
			continue
		}
		live, name := *k.Live, k.Name
		step := func(up bool) func() tea.Cmd {
			return func() tea.Cmd {
				next, err := live.Step(sc, up)
				if err == nil {
					err = next.Validate()
				}
				switch {
				case err != nil:
					c.notice = err.Error()
				case sameScenario(c, sc, next):
					key, dir := live.Up[0], "up"
					if !up {
						key, dir = live.Down[0], "down"
					}
					if slicesEqual(live.Down, live.Up) {
						dir = "on"
					}
					c.notice = fmt.Sprintf("%s moves %s %s: %s=%s is already at the end of its range", key, live.Name, dir, name, sc.Get(name))
				default:
					return restart(next)
				}
				c.version++
				return nil
			}
		}
		if slicesEqual(live.Down, live.Up) { // one key cycles the values
			out = append(out, action{keys: live.Down, help: live.Desc, hint: live.Name, group: "parameters", run: step(true)})
			continue
		}
		out = append(out,
			action{keys: live.Down, label: live.Down[0] + " " + live.Up[0], help: live.Desc + " down / up", hint: live.Name,
				group: "parameters", run: step(false)},
			action{keys: live.Up, group: "parameters", run: step(true)})
	}
	return out
}

// sameScenario reports whether a step left the scenario as it was.
func sameScenario(c *common, a, b experiment.Scenario) bool {
	return experiment.Quote(c.catalog.Command(a)) == experiment.Quote(c.catalog.Command(b))
}

func paceNames() string {
	var parts []string
	for _, p := range paceLadder {
		parts = append(parts, paceName(p))
	}
	return strings.Join(parts, ", ") + " rounds/s"
}

func paceName(p float64) string {
	switch {
	case math.IsInf(p, 1):
		return "max"
	case p == math.Trunc(p):
		return strconv.FormatFloat(p, 'f', -1, 64)
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

// export writes what the charts show — the rounds revealed so far of the
// racers shown — as CSV, named after the preset, the seed and the keys that
// differ from the preset, beside a JSON sidecar with the command line that
// reproduces them, the version and every key; it never overwrites a file,
// and an export before the end says it is partial.
func (r *race) export() tea.Cmd {
	t := r.table.Snapshot()
	var hidden []string
	labels, rounds := t.Labels[:0:0], t.Rounds[:0:0]
	for i := range t.Rounds {
		if !r.visible(i) {
			hidden = append(hidden, t.Labels[i])
			continue
		}
		rs := t.Rounds[i]
		if len(rs) > r.revealed {
			rs = rs[:r.revealed]
		}
		labels, rounds = append(labels, t.Labels[i]), append(rounds, rs)
	}
	t.Labels, t.Rounds = labels, rounds
	partial := r.state != stateDone || r.revealed < r.available()
	return exportWith(r.c, r.sc, t.Len(), partial, r.revealed, hidden, func(w io.Writer) error { return t.Write(w, experiment.CSV) })
}
