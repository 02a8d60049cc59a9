package experiment

import (
	"encoding/json"
	"fmt"
	"strings"
)

// AnnotationKind is the condition of an annotation.
type AnnotationKind int

const (
	// Plateau holds when a racer's metric has changed by less than Tol
	// (relative) over the last Window rounds.
	Plateau AnnotationKind = iota
	// Reaches holds when a racer's metric falls to within Tol (relative)
	// above the level labelled Level (Facts.Levels; "" is the metric's
	// first level): v ≤ (1 + Tol)·level.
	Reaches
	// Diverges holds when a racer stopped with a divergence; the label
	// names its stable step size.
	Diverges
)

// Annotation is a label drawn at a racer's curve on the chart of Metric once
// its condition holds. Text may hold one %s, replaced by the racer's short
// name ("s=5").
type Annotation struct {
	Metric string
	Kind   AnnotationKind
	Tol    float64
	Window int
	Level  string
	Text   string
	// Only, when set, restricts the annotation to racers whose spec starts
	// with one of these prefixes (e.g. "fedavg:s=5", "fedprox").
	Only []string
	// Skip lists racer spec prefixes the annotation never applies to
	// (e.g. "fedavg:s=1", which is gradient descent and never stalls).
	Skip []string
}

// RacerSummary is one racer's end-of-run summary (Presentation.Summarize):
// named numbers and the sentence the front ends show.
type RacerSummary struct {
	Label  string
	Values []SummaryValue
	Text   string
	// Brief says the same without the label, for a legend entry: forms
	// from the longest to the shortest, the longest that fits is shown
	// ("within 5 % from round 14 · 4.50× fewer rounds").
	Brief []string
}

// SummaryValue is one named number of a RacerSummary.
type SummaryValue struct {
	Name  string // snake_case key, e.g. rounds_to_5pct
	Value float64
}

// MarshalJSON writes the summary as one JSON-lines record,
// {"record":"summary","algorithm":…,<name>:<value>,…,"text":…}, leaving out
// values that are not finite.
func (s RacerSummary) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	str := func(v string) string { q, _ := json.Marshal(v); return string(q) }
	fmt.Fprintf(&b, `{"record":"summary","algorithm":%s`, str(s.Label))
	for _, v := range s.Values {
		if n := Number(v.Value); n != "" {
			fmt.Fprintf(&b, `,%s:%s`, str(v.Name), n)
		}
	}
	fmt.Fprintf(&b, `,"text":%s}`, str(s.Text))
	return []byte(b.String()), nil
}

// Prompt is what a view shows when it asks for a knob's value as text (the
// data file of a data= knob): a title, the input's label and placeholder,
// and a paragraph on what happens to the value.
type Prompt struct {
	Title, Label, Placeholder string
	Text                      string
}
