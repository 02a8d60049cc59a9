package cli

import (
	"flag"
	"strings"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui"
)

// viewFlags are the explorer's flags besides the scenario: the state of the
// view that y writes back (pace, theme, pause, hidden racers, y range and
// scale, cursor, story and theory), so that the whole screen travels.
type viewFlags struct {
	pace, theme, hide, y, cursor      string
	paused, linear, noStory, noTheory bool
}

// register adds the view flags to a flag set.
func (f *viewFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.pace, "pace", "", "playback pace in rounds per second, or max (default: the preset drawn over 9 s)")
	fs.StringVar(&f.theme, "theme", "", "colours: dark, light (for projectors) or mono (default: from the terminal's background)")
	fs.BoolVar(&f.paused, "paused", false, "open at round 0, drawn and paused (space plays)")
	fs.StringVar(&f.hide, "hide", "", "racers to hide, by number, e.g. 2,3")
	fs.StringVar(&f.y, "y", "", "y range of the run charts: auto (narrowed so the final values part), full or tail")
	fs.BoolVar(&f.linear, "linear", false, "linear y axes instead of log")
	fs.StringVar(&f.cursor, "cursor", "", "open with the round cursor on round N (the playback shows at least that far)")
	fs.BoolVar(&f.noStory, "no-story", false, "hide the story (i shows it)")
	fs.BoolVar(&f.noTheory, "no-theory", false, "hide the theory overlays (t shows them)")
}

// view checks the flags against the scenario and returns the view state;
// every problem is an *InputError naming the flag, the value and what is
// allowed.
func (f *viewFlags) view(sc experiment.Scenario) (tui.View, error) {
	v := tui.View{Paused: f.paused, Linear: f.linear, NoStory: f.noStory, NoTheory: f.noTheory}
	switch p := strings.TrimSpace(f.pace); {
	case p == "":
	case p == "max":
		v.Pace = tui.MaxPace
	default:
		x, err := experiment.ParseReal(p, 0, 1e6, false, "a number of rounds per second > 0, or max")
		if err != nil {
			return v, experiment.Errorf("--pace %q: %v", p, err)
		}
		v.Pace = x
	}
	switch f.theme {
	case "", "dark", "light", "mono":
		v.Theme = f.theme
	default:
		return v, experiment.Errorf("--theme %q: allowed: dark, light or mono", f.theme)
	}
	switch f.y {
	case "", "auto", "full", "tail":
		v.Y = f.y
	default:
		return v, experiment.Errorf("--y %q: allowed: auto, full or tail", f.y)
	}
	racers := len(sc.Labels())
	if f.hide != "" {
		for _, s := range strings.Split(f.hide, ",") {
			n, err := experiment.ParseWhole(strings.TrimSpace(s), 1, racers)
			if err != nil {
				return v, experiment.Errorf("--hide %q: %q is not a racer number; allowed: numbers 1..%d, comma-separated", f.hide, s, racers)
			}
			v.Hidden = append(v.Hidden, n)
		}
	}
	if f.cursor != "" {
		n, err := experiment.ParseWhole(strings.TrimSpace(f.cursor), 0, sc.Rounds)
		switch {
		case sc.IsSweep():
			return v, experiment.Errorf("--cursor %q: a sweep has no rounds; the cursor of a sweep is moved with ← →", f.cursor)
		case err != nil:
			return v, experiment.Errorf("--cursor %q: allowed: a round in 0..%d", f.cursor, sc.Rounds)
		}
		v.Cursor = n
	}
	return v, nil
}
