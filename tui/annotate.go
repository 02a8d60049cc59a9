package tui

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// annotations returns the labels of a metric's chart whose conditions hold
// within the revealed rounds (they appear when they become true, never
// before), for the visible racers, in the family's wording.
func (r *race) annotations(metric string) []chart.Label {
	m := r.metricIndex(metric)
	if m < 0 {
		return nil
	}
	var out []chart.Label
	for _, a := range r.sc.Family.Annotations(r.sc) {
		if a.Metric != metric {
			continue
		}
		for i := range r.specs {
			if !r.visible(i) || !applies(a, r.specs[i].String()) {
				continue
			}
			if t, v, text, ok := r.holds(a, i, m); ok {
				// The racer's glyph leads the label: next to another curve it
				// still names its own, with or without colour.
				g := string(r.looks[i].glyph) + " "
				short := ""
				if head, _, ok := strings.Cut(text, ":"); ok {
					short = g + head
				}
				out = append(out, chart.Label{Pos: t, Value: v, Text: g + text, Short: short, Color: r.c.styles.racerColor(r.looks[i]), Racer: i})
			}
		}
	}
	return out
}

// applies reports whether an annotation applies to the racer with spec id.
func applies(a experiment.Annotation, id string) bool {
	match := func(prefixes []string) bool {
		for _, p := range prefixes {
			if id == p || strings.HasPrefix(id, p+":") {
				return true
			}
		}
		return false
	}
	if len(a.Only) > 0 && !match(a.Only) {
		return false
	}
	return !match(a.Skip)
}

// holds finds the first revealed round at which annotation a holds for
// racer i on metric column m, and the label's text.
func (r *race) holds(a experiment.Annotation, i, m int) (int, float64, string, bool) {
	name := shortName(r.table.Labels[i])
	text := a.Text
	if strings.Contains(text, "%s") {
		text = fmt.Sprintf(text, name)
	}
	vals := r.values(i, m)
	switch a.Kind {
	case experiment.Plateau:
		// A plateau is a flattening after the curve has moved (by 5 % of
		// its start): a racer that waits before it descends (FedLRGD's
		// set-up epochs) is not stalled.
		w := max(a.Window, 1)
		for t := w; t < len(vals); t++ {
			now, then := vals[t], vals[t-w]
			moved := math.Abs(then-vals[0]) > 0.05*math.Max(math.Abs(vals[0]), math.Abs(then))
			if now > 0 && then > 0 && moved && math.Abs(now-then) <= a.Tol*now {
				return t + 1, now, text, true
			}
		}
	case experiment.Reaches:
		level, found := math.NaN(), false
		for _, l := range r.facts.Levels {
			if l.Metric == a.Metric && (a.Level == "" || l.Label == a.Level) {
				level, found = l.Value, true
				break
			}
		}
		if !found {
			return 0, 0, "", false
		}
		for t, v := range vals {
			if v <= (1+a.Tol)*level {
				return t + 1, v, text, true
			}
		}
	case experiment.Diverges:
		for _, err := range r.failures {
			var re *experiment.RacerError
			var de *algorithms.DivergedError
			if !errors.As(err, &re) || re.Label != r.table.Labels[i] || !errors.As(err, &de) {
				continue
			}
			last := len(r.table.Rounds[i])
			if last == 0 || last > r.revealed {
				return 0, 0, "", false
			}
			if !math.IsNaN(de.Limit) && de.Limit > 0 {
				text += fmt.Sprintf(": stable for η < %.3g", de.Limit)
			}
			return last, vals[last-1], text, true
		}
	}
	return 0, 0, "", false
}

// shortName is what an annotation calls a racer: the part of its label
// after the algorithm ("s=5" of "FedAvg s=5"), or the whole label.
func shortName(label string) string {
	if _, rest, ok := strings.Cut(label, " "); ok && !strings.Contains(label, "+") {
		return rest
	}
	return label
}
