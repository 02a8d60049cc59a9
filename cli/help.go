package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
	"github.com/fedscope/fedscope/tui"
)

// commandDoc is one of fedscope's commands as the help describes it; "" is
// the explorer. The flags come from the command's own flag set (see
// helpRequest), so the help cannot list a flag the command lacks.
type commandDoc struct {
	name, synopsis, about string
	presets               func(p experiment.Preset) bool // the presets it accepts; nil: none
}

var commands = []commandDoc{
	{"", "fedscope [--preset NAME] [--rounds N] [--seed S] [--set key=value]... [--pace R|max] [--theme dark|light|mono] [--paused] [--hide N,…] [--y auto|full|tail] [--linear] [--cursor ROUND]",
		"Opens the explorer: the preset's algorithms race round by round and their curves stream into the charts. " +
			"Press ? inside for the keys of the view; fedscope help PRESET lists them without opening it. " +
			"y inside writes the screen's state back as these flags.",
		func(experiment.Preset) bool { return true }},
	{"lesson", "fedscope lesson NAME|FILE [--step K] [--theme …] · fedscope lesson --list · fedscope lesson --check FILE",
		"Teaches a lesson: a Markdown file of steps (a title, 1–4 sentences, optionally a ```fedscope command line and a stop: round), " +
			"started paused at step 1. PageDown (a presentation clicker) plays the step to its stop, and at the stop goes to the next step; " +
			"PageUp goes back a step. Every explorer key still works. --list shows the built-in lessons; --check reads a file without opening it.", nil},
	{"presets", "fedscope presets", "Lists the presets, one line each.", nil},
	{"run", "fedscope run [--preset NAME] [--rounds N] [--seed S] [--set key=value]... [--format csv|jsonl] [--out PATH|-] [--plot FILE.svg]",
		"Races a preset's algorithms without the explorer and writes one row per racer and round (round 0 is the start): " +
			"the numbers the explorer draws for the same seed. How the data were prepared, notes and warnings go to standard error.",
		func(p experiment.Preset) bool { return !p.Scenario().IsSweep() }},
	{"sweep", "fedscope sweep --preset NAME [--trials N] [--seed S] [--set key=value]... [--format csv|jsonl] [--out PATH|-] [--shard i/n] [--plot FILE.svg]",
		"Runs a sweep preset: the swept key over its grid, every value on fresh data for each trial, " +
			"and writes the mean and spread per value. Trials run on all cores; the output does not depend on their number. " +
			"--shard i/n computes only every n-th evaluation (i = 0…n−1) as JSON lines, for machines that share a sweep; fedscope merge joins the shards.",
		func(p experiment.Preset) bool { return p.Scenario().IsSweep() }},
	{"merge", "fedscope merge [--format csv|jsonl] [--out PATH|-] SHARD-FILE...",
		"Joins the shards of one sweep (fedscope sweep --shard i/n, every i) into its table: byte for byte what the unsharded sweep writes. " +
			"Shards of different scenarios, seeds or builds, missing or incomplete shards, and shards changed after writing (every line carries a digest) are refused.", nil},
	{"reproduce", "fedscope reproduce [PAPER…|EXPERIMENT…|all] [--out DIR] [--quick] [--data DIR] [--shard i/n] · fedscope reproduce --merge [--out DIR] SHARD-DIR...",
		"Re-runs every claim of the papers that fedscope covers and writes into DIR report.md — per claim the paper's number beside fedscope's, " +
			"the tolerance, a verdict (reproduced, differs with the reason, not reproducible here) and the command that re-runs it — one SVG per figure, " +
			"and the CSV (and JSON lines) of every run. PAPER is 000 … 004. A first look in under a minute: --quick. Table 3's pendigits row " +
			"needs the directory of pendigits.scale and pendigits.scale.t: --data DIR. For several machines: --shard i/n makes every n-th " +
			"experiment, and --merge joins the shards' directories into one report.", nil},
	{"help", "fedscope help [TOPIC]", "Explains a command, a preset (its story, its --set keys and its explorer keys), the explorer's keys or the exit statuses.", nil},
	{"version", "fedscope --version", "Prints the version.", nil},
}

// commandNames are the subcommands a command line may start with.
func commandNames() []string {
	var out []string
	for _, c := range commands[1:] {
		out = append(out, c.name)
	}
	return out
}

func lookupCommand(name string) (commandDoc, bool) {
	i := slices.IndexFunc(commands, func(c commandDoc) bool { return c.name == name })
	if i < 0 {
		return commandDoc{}, false
	}
	return commands[i], true
}

// exitStatuses is the help's table of exit statuses (see the Exit constants).
const exitStatuses = `exit status:
  0    success (also --help and help)
  1    a run failed or a racer diverged; the rows computed are written
  2    bad input: unknown preset, command, flag or key, a malformed or out-of-range value, a bad --out, too large for memory
  130  interrupted (SIGINT); 143 for SIGTERM, 129 for SIGHUP or the explorer's terminal gone; the rows computed are written, whole`

// helpRequest is a command's --help: report prints the command's help
// from its flag set to standard output and exits 0.
type helpRequest struct {
	cmd string
	fs  *flag.FlagSet
}

func (h helpRequest) Error() string { return "help requested" }

// writeCommandHelp writes the help of a command: synopsis, what it does, its
// flags, the presets it accepts and the exit statuses.
func (a *app) writeCommandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c, _ := lookupCommand(name)
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.synopsis, ansi.Wrap(c.about, 78, ""))
	if n := flagCount(fs); n > 0 {
		fmt.Fprintln(w, "\nflags:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fs.VisitAll(func(f *flag.Flag) {
			arg, usage := flagArgs[f.Name], f.Usage
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				arg = ""
			}
			if name == "reproduce" && f.Name == "out" {
				arg = "DIR"
			}
			switch {
			case arg == "" && f.DefValue == "false":
			case name == "sweep" && f.Name == "preset":
				usage += " (required: a sweep preset below)"
			case f.DefValue != "" && f.DefValue != "0" && f.DefValue != "-1" && f.DefValue != "[]":
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(tw, "  --%s %s\t%s\n", f.Name, arg, usage)
		})
		tw.Flush()
	}
	if c.presets != nil {
		fmt.Fprintln(w, "\npresets (fedscope help PRESET shows one's keys):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range a.catalog.Presets() {
			if c.presets(p) {
				fmt.Fprintf(tw, "  %s\t%s\n", p.Name, p.Summary)
			}
		}
		tw.Flush()
	}
	if c.name != "version" {
		fmt.Fprintf(w, "\n%s\n", exitStatuses)
	}
}

// flagArgs name the values of the flags in the help, as the synopses do.
var flagArgs = map[string]string{
	"preset": "NAME", "rounds": "N", "seed": "S", "set": "key=value", "trials": "N",
	"format": "csv|jsonl", "out": "PATH|-", "shard": "i/n", "pace": "R|max", "theme": "dark|light|mono",
	"plot": "FILE.svg", "data": "DIR",
}

// flagCount is the number of flags fs defines (0 for nil).
func flagCount(fs *flag.FlagSet) int {
	n := 0
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { n++ })
	}
	return n
}

// help is `fedscope help [TOPIC]`.
func (a *app) help(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return experiment.Errorf("help: one topic at a time (got %d): %s", len(args), strings.Join(args, " "))
	}
	if len(args) == 0 {
		a.writeOverview(a.stdout)
		return nil
	}
	topic := strings.TrimPrefix(strings.TrimPrefix(args[0], "-"), "-")
	switch topic {
	case "keys":
		sc, err := a.catalog.Scenario(registry.DefaultPreset)
		if err != nil {
			return err
		}
		return a.writePresetKeys(a.stdout, sc, true)
	case "exit", "status", "exit-status":
		fmt.Fprintln(a.stdout, exitStatuses)
		return nil
	case "explore", "explorer":
		return a.explorerHelp()
	case "help":
		a.writeCommandHelp(a.stdout, "help", nil)
		return nil
	case "version":
		a.writeCommandHelp(a.stdout, "version", nil)
		return nil
	}
	if _, ok := lookupCommand(topic); ok && topic != "" {
		err := a.command(ctx, []string{topic, "--help"})
		var h helpRequest
		if errors.As(err, &h) {
			a.writeCommandHelp(a.stdout, h.cmd, h.fs)
			return nil
		}
		return err
	}
	if p, err := a.catalog.Lookup(topic); err == nil {
		return a.writePreset(a.stdout, p)
	}
	topics := append(append(commandNames(), "explore", "keys", "exit"), a.catalog.PresetNames()...)
	return experiment.Errorf("help: unknown topic %q%s; topics: a command (%s), explore, keys, exit, or a preset (fedscope presets)",
		args[0], experiment.DidYouMean(topic, topics), strings.Join(commandNames(), ", "))
}

// explorerHelp is the help of the explorer's flags.
func (a *app) explorerHelp() error {
	fs := newFlagSet("fedscope")
	var sf scenarioFlags
	sf.register(fs)
	var vf viewFlags
	vf.register(fs)
	a.writeCommandHelp(a.stdout, "", fs)
	return nil
}

// writeOverview is `fedscope help` and `fedscope --help`.
func (a *app) writeOverview(w io.Writer) {
	fmt.Fprintln(w, "fedscope explores federated learning: algorithms race round by round, live, as in the papers.")
	fmt.Fprintln(w, "\nusage:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\n", c.synopsis)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nfedscope help TOPIC explains one of: %s, explore (the explorer's flags), keys, exit, or a preset:\n",
		strings.Join(commandNames(), ", "))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range a.catalog.Presets() {
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, p.Summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s\n", exitStatuses)
}

// writePreset is `fedscope help PRESET`: what it shows and why, how to open
// it, its --set keys with their values, and the explorer's keys on it.
func (a *app) writePreset(w io.Writer, p experiment.Preset) error {
	sc := p.Scenario()
	fmt.Fprintf(w, "%s: %s\npaper: %s\n", p.Name, p.Summary, sc.Family.Paper())
	if story := strings.TrimSpace(sc.Family.Story(sc)); story != "" {
		fmt.Fprintf(w, "\n%s\n", ansi.Wrap(story, 78, ""))
	}
	if h := strings.TrimSpace(sc.Family.Help(sc)); h != "" {
		fmt.Fprintf(w, "\n%s\n", ansi.Wrap(h, 78, ""))
	}
	cmd := "run"
	if sc.IsSweep() {
		cmd = "sweep"
	}
	fmt.Fprintf(w, "\nopen it:   fedscope --preset %s\nheadless:  fedscope %s --preset %s --format csv\n", p.Name, cmd, p.Name)
	fmt.Fprintln(w, "\n--set keys (current value, then what it is):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range sc.Knobs() {
		help := k.Help
		if k.Name == sc.Sweep.Knob {
			help = "swept: " + help
		} else if k.Refuse != nil {
			if why := k.Refuse(sc); why != "" {
				help += " [" + why + "]"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Name, orDash(k.Get(sc)), help)
	}
	tw.Flush()
	return a.writePresetKeys(w, sc, false)
}

// writePresetKeys lists the explorer's keys on sc's view.
func (a *app) writePresetKeys(w io.Writer, sc experiment.Scenario, title bool) error {
	if title {
		fmt.Fprintf(w, "keys of the explorer on %s (other presets differ: fedscope help PRESET; ? inside lists the view's):\n", sc.Preset)
	} else {
		fmt.Fprintln(w, "\nkeys of the explorer on this preset:")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range tui.Keys(a.catalog, sc) {
		if k.Help == "" { // a second key of an action already listed
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\n", k.Keys, k.Help)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
