package experiment

import (
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Catalog is the list of families fedscope offers (experiment/registry
// builds the real one; tests build their own). It finds presets and applies
// `--set` assignments, including keys that switch a scenario to another
// family (data=).
type Catalog struct {
	families []Family
}

// NewCatalog lists families in the order their presets are shown.
func NewCatalog(families ...Family) *Catalog { return &Catalog{families: families} }

// Families returns the families in catalog order.
func (c *Catalog) Families() []Family { return c.families }

// LessonFile is a built-in lesson: the name `fedscope lesson NAME` opens
// (its file name without .md) and its Markdown source (see experiment/lesson
// for the format).
type LessonFile struct {
	Name   string
	Source []byte
}

// Lessons lists the built-in lessons of every family (the .md files of its
// Lessons, in any folder; a lesson's name is its file's without .md), in
// catalog order.
func (c *Catalog) Lessons() []LessonFile {
	var out []LessonFile
	for _, f := range c.families {
		fsys := f.Lessons()
		if fsys == nil {
			continue
		}
		fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path.Ext(p) != ".md" {
				return nil
			}
			if b, err := fs.ReadFile(fsys, p); err == nil {
				out = append(out, LessonFile{Name: strings.TrimSuffix(path.Base(p), ".md"), Source: b})
			}
			return nil
		})
	}
	return out
}

// Presets lists every preset, family by family.
func (c *Catalog) Presets() []Preset {
	var out []Preset
	for _, f := range c.families {
		out = append(out, f.Presets()...)
	}
	return out
}

// PresetNames lists the names of the presets, sweeps included.
func (c *Catalog) PresetNames() []string {
	var names []string
	for _, p := range c.Presets() {
		names = append(names, p.Name)
	}
	return names
}

// SweepPresetNames lists the presets that are sweeps.
func (c *Catalog) SweepPresetNames() []string {
	var out []string
	for _, p := range c.Presets() {
		if p.Scenario().IsSweep() {
			out = append(out, p.Name)
		}
	}
	return out
}

// Lookup finds a preset by name.
func (c *Catalog) Lookup(name string) (Preset, error) {
	for _, p := range c.Presets() {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, Errorf("unknown preset %q%s; allowed: %s", name, DidYouMean(name, c.PresetNames()), strings.Join(c.PresetNames(), ", "))
}

// Scenario returns the named preset's scenario with assignments applied as
// --set applies them (key=value each), or the first *InputError.
func (c *Catalog) Scenario(preset string, sets ...string) (Scenario, error) {
	p, err := c.Lookup(preset)
	if err != nil {
		return Scenario{}, err
	}
	return c.Apply(p.Scenario(), sets)
}

// Opener finds a knob of another family that may open its family on any
// scenario (Knob.Open).
func (c *Catalog) Opener(key string) (Knob, bool) {
	for _, f := range c.families {
		for _, p := range f.Presets() {
			sc := p.Scenario()
			if k, ok := sc.Knob(key); ok && k.Open != nil {
				return k, true
			}
		}
	}
	return Knob{}, false
}

// Set assigns key on sc: one of sc's own keys, or a key that opens another
// family (data=), which first switches sc to that family's base scenario
// keeping the seed. Any other key is an *InputError that names the presets
// the key belongs to, or the keys sc has.
func (c *Catalog) Set(sc *Scenario, key, value string) error {
	if _, ok := sc.Knob(key); ok {
		return sc.Set(key, value)
	}
	if k, ok := c.Opener(key); ok && strings.TrimSpace(value) != "" {
		if sc.IsSweep() {
			return Errorf("%s=%q: %s is a sweep, and %s= opens a run; race the file with: fedscope run --set %s=PATH",
				key, value, sc.Preset, key, key)
		}
		base := k.Open(sc.Seed)
		if err := base.Set(key, value); err != nil {
			return err
		}
		*sc = base
		return nil
	}
	// The owners are every other preset with the key, of any family: a
	// family's keys differ between its presets (trials and sweep= exist
	// only on its sweeps).
	var owners []string
	sweeps := true // every owner is a sweep
	for _, p := range c.Presets() {
		if p.Name == sc.Preset {
			continue
		}
		psc := p.Scenario()
		if _, ok := psc.Knob(key); ok && !slices.Contains(owners, p.Name) {
			owners = append(owners, p.Name)
			sweeps = sweeps && psc.IsSweep()
		}
	}
	if len(owners) > 0 {
		why := ""
		if sweeps && !sc.IsSweep() {
			why = ", which is not a sweep"
		}
		return Errorf("key %q (value %q) applies only to the %s preset(s), not to %s%s; its keys: %s",
			key, value, strings.Join(owners, ", "), sc.Preset, why, strings.Join(settable(*sc), ", "))
	}
	return Errorf("unknown key %q (value %q)%s; allowed keys: %s", key, value, DidYouMean(key, settable(*sc)), strings.Join(settable(*sc), ", "))
}

// settable lists the keys a person may set on sc: its keys but the knob
// its sweep varies and the knobs that Refuse it (which Set refuses).
func settable(sc Scenario) []string {
	var out []string
	for _, k := range sc.Knobs() {
		if k.Name != sc.Sweep.Knob && (k.Refuse == nil || k.Refuse(sc) == "") {
			out = append(out, k.Name)
		}
	}
	return out
}

// Apply applies "key=value" assignments in order, the early ones (keys that
// switch the family or the swept knob: data=, sweep=) first, then validates
// the whole scenario so that cross-knob limits (e.g. subspace_dim ≤ dim) are
// checked.
func (c *Catalog) Apply(sc Scenario, assignments []string) (Scenario, error) {
	if err := c.applyEarly(&sc, assignments, true); err != nil {
		return sc, err
	}
	if err := c.applyEarly(&sc, assignments, false); err != nil {
		return sc, err
	}
	return sc, sc.Validate()
}

// ApplyEarly applies only the early assignments (see Apply); the command
// line calls it before --rounds and --seed so that a family switch keeps
// them.
func (c *Catalog) ApplyEarly(sc Scenario, assignments []string) (Scenario, []string, error) {
	var rest []string
	for _, a := range assignments {
		if !c.isEarly(sc, a) {
			rest = append(rest, a)
		}
	}
	err := c.applyEarly(&sc, assignments, true)
	return sc, rest, err
}

func (c *Catalog) applyEarly(sc *Scenario, assignments []string, early bool) error {
	for _, a := range assignments {
		if c.isEarly(*sc, a) != early {
			continue
		}
		key, value, ok := strings.Cut(a, "=")
		if !ok {
			return Errorf("--set %q: expected key=value, e.g. eta=0.05", a)
		}
		if err := c.Set(sc, strings.TrimSpace(key), value); err != nil {
			return err
		}
	}
	return nil
}

// isEarly reports whether an assignment is applied before the others: its
// knob is Early, or it opens another family.
func (c *Catalog) isEarly(sc Scenario, a string) bool {
	key, _, _ := strings.Cut(a, "=")
	key = strings.TrimSpace(key)
	if k, ok := sc.Knob(key); ok {
		return k.Early || k.Open != nil
	}
	_, ok := c.Opener(key)
	return ok
}

// Command returns the command-line arguments (after "fedscope") that
// reproduce sc: its preset, and --rounds, --seed and a --set for every key
// whose value differs from the preset's (a scenario opened by a key such as
// data= is written from the preset of that key's family).
func (c *Catalog) Command(sc Scenario) []string {
	base, preset, opened := sc, sc.Preset, ""
	if p, err := c.Lookup(sc.Preset); err == nil {
		base = p.Scenario()
	} else {
		for _, k := range sc.Knobs() {
			if k.Open != nil && k.Get(sc) != "" {
				base, opened = k.Open(sc.Seed), k.Name
				break
			}
		}
		if presets := sc.Family.Presets(); len(presets) > 0 {
			preset = presets[0].Name
		}
	}
	args := []string{"--preset", preset}
	if sc.Seed != base.Seed {
		args = append(args, "--seed", strconv.FormatUint(sc.Seed, 10))
	}
	if sc.Rounds != base.Rounds {
		args = append(args, "--rounds", strconv.Itoa(sc.Rounds))
	}
	set := func(k Knob) { args = append(args, "--set", k.Name+"="+k.Get(sc)) }
	if opened != "" {
		if k, ok := sc.Knob(opened); ok {
			set(k)
		}
	}
	for _, k := range sc.Knobs() {
		if k.Name == "rounds" || k.Name == "seed" || k.Name == opened {
			continue
		}
		if bk, ok := base.Knob(k.Name); !ok || bk.Get(base) != k.Get(sc) {
			set(k)
		}
	}
	return args
}

// Quote writes command-line arguments for a POSIX shell, quoting only what
// needs it.
func Quote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,:/+@%", r))
		}) {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
