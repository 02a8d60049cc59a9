package registry_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
)

// TestCaptions: every preset, the other sweep of newton-heterogeneity and a
// data-file run have a caption of one or two sentences that fits where the
// story does not (at most 150 characters).
func TestCaptions(t *testing.T) {
	cat := registry.Catalog()
	var scs []experiment.Scenario
	for _, p := range cat.Presets() {
		scs = append(scs, p.Scenario())
	}
	beta, err := cat.Scenario("newton-heterogeneity", "sweep=beta")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "points.csv")
	if err := os.WriteFile(file, []byte("1,0.5,0.2\n0,0.1,0.9\n1,0.4,0.3\n0,0.2,0.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := cat.Scenario("paradox", "data="+file, "clients=2")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range append(scs, beta, data) {
		c := sc.Family.Caption(sc)
		n := utf8.RuneCountInString(c)
		sentences := strings.Count(c+" ", ". ")
		if n == 0 || n > 150 || sentences < 1 || sentences > 2 {
			t.Errorf("%s (%s): caption of %d characters and %d sentences: %q", sc.Preset, sc.Sweep.Knob, n, sentences, c)
		}
	}
}

// TestPresetRacersLook: every racer of a run preset has the look its
// family fixes, so that a preset looks the same on every screen.
func TestPresetRacersLook(t *testing.T) {
	for _, p := range registry.Catalog().Presets() {
		sc := p.Scenario()
		if sc.IsSweep() {
			continue
		}
		looks := sc.Family.Looks()
		for _, r := range sc.Racers() {
			if _, ok := looks[r.Spec.String()]; !ok {
				t.Errorf("%s: racer %s has no look of its own", p.Name, r.Spec)
			}
		}
	}
}

// TestTextsNameBoundKeys (issue 23): the help, story and caption of every
// preset name only keys that act on its view — "x" (relabel or switch the
// x axis) only where the sweep declares an axis metric or the run a
// metric that can be the x axis, "h/H" only where a knob binds h.
func TestTextsNameBoundKeys(t *testing.T) {
	cat := registry.Catalog()
	var scs []experiment.Scenario
	for _, p := range cat.Presets() {
		scs = append(scs, p.Scenario())
	}
	for _, extra := range [][2]string{{"newton-heterogeneity", "sweep=beta"}, {"lowrank-complexity", "sweep=clients"}} {
		sc, err := cat.Scenario(extra[0], extra[1])
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	xKey := regexp.MustCompile(`\bx (labels|relabels|switches|plots)\b`)
	for _, sc := range scs {
		text := sc.Family.Help(sc) + " " + sc.Family.Story(sc) + " " + sc.Family.Caption(sc)
		if xKey.MatchString(text) {
			bound := sc.IsSweep() && sc.Sweep.Axis != ""
			if !sc.IsSweep() {
				for _, m := range sc.Family.Metrics(sc) {
					bound = bound || m.XAxis
				}
			}
			if !bound {
				t.Errorf("%s (%s): the texts name x, which does nothing on this view", sc.Preset, sc.Sweep.Knob)
			}
		}
		if strings.Contains(text, "h/H") {
			bound := false
			for _, k := range sc.Family.Knobs(sc) {
				if k.Live != nil && slices.Contains(k.Live.Down, "h") {
					bound = true
				}
			}
			if !bound {
				t.Errorf("%s: the texts name h/H, which no knob binds", sc.Preset)
			}
		}
	}
}
