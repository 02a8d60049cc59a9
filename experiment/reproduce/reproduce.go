// Package reproduce is `fedscope reproduce`: it makes the runs and sweeps
// that the families declare for their papers' claims
// (experiment.Reproduction), writes every run's rows as CSV (and JSON
// lines), reads the files back, judges every claim on them and writes
// report.md — each claim with the paper's number beside fedscope's, the
// tolerance, the verdict and the command that re-runs it — and one SVG per
// figure, drawn from the same rows. The experiments can be split into
// shards (each runs every n-th one) and the shards merged into one report:
// the report is made from the files, whoever wrote them.
package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fedscope/fedscope/experiment"
)

// Options choose what `fedscope reproduce` runs.
type Options struct {
	// Select are paper keys ("000"), experiment names ("000-fig4") or
	// "all"; empty means all.
	Select []string
	// Quick runs fewer trials (and leaves the slowest experiments out) for
	// a first look.
	Quick bool
	// DataDir holds the data files the experiments may read (pendigits);
	// "" for none.
	DataDir string
	// Shard, when Count > 0, runs only the experiments k with
	// k mod Count = Index (in report order).
	Shard experiment.Shard
	// Version names the fedscope that ran, for the report's first line.
	Version string
}

// Plan is what a reproduction will do: the families' declarations, the
// experiments selected and why the others are left out.
type Plan struct {
	Opts   Options
	Repros []*experiment.Reproduction
	// Run are the experiments to make, in order.
	Run []experiment.Experiment
	// Skip gives, per experiment left out, why (an *experiment.Unavailable).
	Skip map[string]error
	all  map[string]experiment.Experiment
}

// NewPlan selects the papers and experiments of the catalog. An unknown
// selection is an *experiment.InputError naming the allowed ones.
func NewPlan(cat *experiment.Catalog, opts Options) (*Plan, error) {
	p := &Plan{Opts: opts, Skip: map[string]error{}, all: map[string]experiment.Experiment{}}
	papers, names, err := p.gather(cat)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(p.Repros, func(a, b *experiment.Reproduction) int { return strings.Compare(a.Paper, b.Paper) })
	want, err := p.wanted(papers, names)
	if err != nil {
		return nil, err
	}
	p.keepSelected(want)
	p.schedule(want)
	return p, nil
}

// gather collects the families' reproductions and their experiments,
// returning the papers and experiment names in the catalog's order.
func (p *Plan) gather(cat *experiment.Catalog) (papers, names []string, err error) {
	for _, f := range cat.Families() {
		if r := f.Reproduction(); r != nil {
			p.Repros = append(p.Repros, r)
			papers = append(papers, r.Paper)
			for _, e := range r.Experiments {
				if _, dup := p.all[e.Name]; dup {
					return nil, nil, fmt.Errorf("reproduce: experiment %q is declared twice", e.Name)
				}
				p.all[e.Name] = e
				names = append(names, e.Name)
			}
		}
	}
	return papers, names, nil
}

// wanted resolves the selection (all, papers, experiments; nothing means
// all) to the experiments wanted.
func (p *Plan) wanted(papers, names []string) (map[string]bool, error) {
	want := map[string]bool{}
	for _, s := range p.Opts.Select {
		switch {
		case s == "all":
			for _, n := range names {
				want[n] = true
			}
		case slices.Contains(papers, s):
			for _, r := range p.Repros {
				if r.Paper == s {
					for _, e := range r.Experiments {
						want[e.Name] = true
					}
				}
			}
		case slices.Contains(names, s):
			want[s] = true
		default:
			slices.Sort(papers)
			return nil, experiment.Errorf("reproduce: unknown paper or experiment %q%s; allowed: all, the papers %s, or an experiment: %s",
				s, experiment.DidYouMean(s, append(slices.Clone(papers), names...)), strings.Join(papers, ", "), strings.Join(names, ", "))
		}
	}
	if len(p.Opts.Select) == 0 {
		for _, n := range names {
			want[n] = true
		}
	}
	return want, nil
}

// keepSelected keeps only the papers that have a selected experiment or an
// offline claim among selected papers.
func (p *Plan) keepSelected(want map[string]bool) {
	sel := p.Opts.Select
	var repros []*experiment.Reproduction
	for _, r := range p.Repros {
		keep := false
		for _, e := range r.Experiments {
			keep = keep || want[e.Name]
		}
		keep = keep || slices.Contains(sel, r.Paper) || len(sel) == 0 || slices.Contains(sel, "all")
		if keep {
			repros = append(repros, r)
		}
	}
	p.Repros = repros
}

// schedule puts the kept papers' experiments in Run, in report order, or
// in Skip with why: unavailable, not selected, or another shard's.
func (p *Plan) schedule(want map[string]bool) {
	shard := p.Opts.Shard
	k := 0
	for _, r := range p.Repros {
		for _, e := range r.Experiments {
			if err := p.available(e, want[e.Name]); err != nil {
				p.Skip[e.Name] = err
				continue
			}
			if shard.Count > 0 && k%shard.Count != shard.Index {
				k++
				p.Skip[e.Name] = &experiment.Unavailable{Verdict: experiment.NotRun,
					Reason: fmt.Sprintf("made by another shard than %s", shard)}
				continue
			}
			k++
			p.Run = append(p.Run, e)
		}
	}
}

// available says why an experiment cannot or will not run, or nil.
func (p *Plan) available(e experiment.Experiment, selected bool) error {
	if !selected {
		return &experiment.Unavailable{Verdict: experiment.NotRun, Reason: "not selected (run `fedscope reproduce " + e.Name + "`)"}
	}
	for _, f := range e.Files {
		if p.Opts.DataDir == "" {
			return &experiment.Unavailable{Verdict: experiment.NotHere,
				Reason: fmt.Sprintf("needs the data file %s: give --data DIR with it", f.Name)}
		}
		path := filepath.Join(p.Opts.DataDir, f.Name)
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return &experiment.Unavailable{Verdict: experiment.NotHere,
				Reason: fmt.Sprintf("needs the data file %s, which is not in %s", f.Name, p.Opts.DataDir)}
		}
	}
	if p.Opts.Quick && e.Quick.Skip {
		return &experiment.Unavailable{Verdict: experiment.NotRun, Reason: "left out by --quick (the full report runs it)"}
	}
	return nil
}

// Scenario builds the experiment's scenario as its command line does, and
// that command line (after "fedscope").
func (p *Plan) Scenario(cat *experiment.Catalog, e experiment.Experiment) (experiment.Scenario, []string, error) {
	sets := make([]string, 0, len(e.Files)+len(e.Set))
	for _, f := range e.Files {
		sets = append(sets, f.Knob+"="+filepath.Join(p.Opts.DataDir, f.Name))
	}
	sets = append(sets, e.Set...)
	sc, err := cat.Scenario(e.Preset, sets...)
	if err != nil {
		return sc, nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	rounds, trials := e.Rounds, e.Trials
	if p.Opts.Quick {
		rounds = cmpOr(e.Quick.Rounds, rounds)
		trials = cmpOr(e.Quick.Trials, trials)
	}
	if rounds > 0 {
		sc.Rounds = rounds
	}
	if trials > 0 && sc.IsSweep() {
		sc.Trials = trials
	}
	if err := sc.Validate(); err != nil {
		return sc, nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	cmd := []string{"run"}
	if sc.IsSweep() {
		cmd = []string{"sweep"}
	}
	cmd = append(cmd, "--preset", e.Preset, "--seed", fmt.Sprint(sc.Seed), "--rounds", fmt.Sprint(sc.Rounds))
	if sc.IsSweep() {
		cmd = append(cmd, "--trials", fmt.Sprint(sc.Trials))
	}
	for _, s := range sets {
		cmd = append(cmd, "--set", s)
	}
	return sc, append(cmd, "--format", "csv"), nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// Progress is what Run tells as it goes: experiment Index (from 0) of
// Total, and for a sweep its evaluations Done of Evals.
type Progress struct {
	Index, Total int
	Name, What   string
	Done, Evals  int
	Finished     bool
	Elapsed      time.Duration // of this experiment, once Finished
}

// sidecar is NAME.json: what the report needs besides the CSV.
type sidecar struct {
	Experiment string                    `json:"experiment"`
	Command    string                    `json:"command"`
	Sweep      bool                      `json:"sweep"`
	Seed       uint64                    `json:"seed"`
	Rounds     int                       `json:"rounds"`
	Trials     int                       `json:"trials,omitempty"`
	Quick      bool                      `json:"quick"`
	Params     map[string]experiment.Num `json:"params,omitempty"`
	Charts     []experiment.Chart        `json:"charts"`
	Failed     []string                  `json:"failed,omitempty"`
	Warnings   []string                  `json:"warnings,omitempty"`
}

// Run makes the plan's experiments, one after the other (each uses every
// core), writing NAME.csv, NAME.json and, for a run, NAME.jsonl into dir.
// It returns ctx.Err() when cancelled, the files of the experiments
// finished so far kept.
func Run(ctx context.Context, cat *experiment.Catalog, engine *experiment.Engine, p *Plan, dir string, progress func(Progress)) error {
	if progress == nil {
		progress = func(Progress) {}
	}
	for i, e := range p.Run {
		sc, cmd, err := p.Scenario(cat, e)
		if err != nil {
			return err
		}
		what := fmt.Sprintf("fedscope %s", experiment.Quote(cmd))
		start := time.Now()
		progress(Progress{Index: i, Total: len(p.Run), Name: e.Name, What: what})
		car := sidecar{Experiment: e.Name, Command: "fedscope " + experiment.Quote(cmd), Sweep: sc.IsSweep(), Seed: sc.Seed,
			Rounds: sc.Rounds, Quick: p.Opts.Quick}
		var files map[string]func(io.Writer) error
		if sc.IsSweep() {
			files, err = sweep(ctx, sc, &car, func(done, total int) {
				progress(Progress{Index: i, Total: len(p.Run), Name: e.Name, What: what, Done: done, Evals: total})
			})
		} else {
			files, err = run(ctx, engine, sc, &car)
		}
		if err != nil {
			return fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		files[".json"] = func(w io.Writer) error {
			b, err := json.MarshalIndent(car, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(b, '\n'))
			return err
		}
		for _, ext := range []string{".csv", ".jsonl", ".json"} {
			if write, ok := files[ext]; ok {
				if err := writeFile(filepath.Join(dir, e.Name+ext), write); err != nil {
					return err
				}
			}
		}
		progress(Progress{Index: i, Total: len(p.Run), Name: e.Name, What: what, Finished: true, Elapsed: time.Since(start)})
	}
	return nil
}

// run makes one run: its table as CSV and JSON lines (header, rows, the
// family's summaries), its parameters and charts in the sidecar.
func run(ctx context.Context, engine *experiment.Engine, sc experiment.Scenario, car *sidecar) (map[string]func(io.Writer) error, error) {
	table := experiment.NewTable(sc)
	var mu sync.Mutex
	res, err := engine.Run(ctx, sc, experiment.Observer{Round: func(pt experiment.Point) {
		mu.Lock()
		defer mu.Unlock()
		table.Add(pt)
	}})
	if err != nil {
		return nil, err
	}
	table.Header = experiment.NewHeader(sc, res.Facts)
	sums := sc.Family.Summarize(sc, table)
	car.Params = map[string]experiment.Num{}
	for _, prm := range res.Facts.Params {
		car.Params[prm.Name] = experiment.Num(prm.Value)
	}
	car.Charts = experiment.ChartsOfRun(sc, res.Facts)
	for _, e := range res.Failed() {
		car.Failed = append(car.Failed, e.Error())
	}
	car.Warnings = res.Facts.Warnings
	return map[string]func(io.Writer) error{
		".csv": func(w io.Writer) error { return table.Write(w, experiment.CSV) },
		".jsonl": func(w io.Writer) error {
			if err := table.Write(w, experiment.JSONL); err != nil {
				return err
			}
			for _, s := range sums {
				b, _ := s.MarshalJSON()
				if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
					return err
				}
			}
			return nil
		},
	}, nil
}

// sweep makes one sweep: its table as CSV, its charts in the sidecar.
func sweep(ctx context.Context, sc experiment.Scenario, car *sidecar, progress func(done, total int)) (map[string]func(io.Writer) error, error) {
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		return nil, err
	}
	car.Trials = sc.Trials
	progress(0, table.Total())
	if err := experiment.RunSweep(ctx, sc, func(r experiment.TrialResult) {
		table.Add(r)
		progress(table.Done(), table.Total())
	}); err != nil {
		return nil, err
	}
	car.Charts = experiment.ChartsOfSweep(sc)
	return map[string]func(io.Writer) error{
		".csv": func(w io.Writer) error { return table.Write(w, experiment.CSV) },
	}, nil
}

// writeFile writes a file whole: into a temporary file beside it, renamed
// over it once complete.
func writeFile(path string, write func(io.Writer) error) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// Load reads what an experiment wrote into one of dirs: its sidecar and
// its CSV. It returns a nil Measured when no dir has it, and an error when
// the files are there but broken, or in more than one dir.
func Load(dirs []string, name string) (*experiment.Measured, error) {
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, name+".json")); err == nil {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 0:
		return nil, nil
	case len(found) > 1:
		return nil, experiment.Errorf("reproduce --merge: experiment %s is in %s: every experiment must come from one shard",
			name, strings.Join(found, " and "))
	}
	dir := found[0]
	raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		return nil, err
	}
	var car sidecar
	if err := json.Unmarshal(raw, &car); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name+".json"), err)
	}
	f, err := os.Open(filepath.Join(dir, name+".csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	frame, err := experiment.ReadFrame(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name+".csv"), err)
	}
	m := &experiment.Measured{Name: name, Command: car.Command, Sweep: car.Sweep, Seed: car.Seed, Rounds: car.Rounds,
		Trials: car.Trials, Frame: frame, Params: map[string]float64{}, Charts: car.Charts, Failed: car.Failed}
	for k, v := range car.Params {
		m.Params[k] = float64(v)
	}
	return m, nil
}

// Manifest is a shard's shard.json: what it was asked to run, so that
// merge can check that the shards belong together.
type Manifest struct {
	Shard   string   `json:"shard"`
	Select  []string `json:"select"`
	Quick   bool     `json:"quick"`
	DataDir string   `json:"data,omitempty"`
	Version string   `json:"version"`
	Ran     []string `json:"ran"`
}

// WriteManifest writes a shard's shard.json into dir.
func WriteManifest(dir string, p *Plan) error {
	m := Manifest{Shard: p.Opts.Shard.String(), Select: p.Opts.Select, Quick: p.Opts.Quick, DataDir: p.Opts.DataDir,
		Version: p.Opts.Version}
	for _, e := range p.Run {
		m.Ran = append(m.Ran, e.Name)
	}
	return writeFile(filepath.Join(dir, "shard.json"), func(w io.Writer) error {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
}

// ReadManifests reads the shards' manifests and checks that they are the
// n shards of one reproduction, each once; it returns the options they
// ran with.
func ReadManifests(dirs []string) (Options, error) {
	var opts Options
	seen := map[int]string{}
	count := 0
	for i, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(d, "shard.json"))
		if err != nil {
			return opts, experiment.Errorf("reproduce --merge: %s: not a shard's directory (no shard.json): %v", d, errors.Unwrap(err))
		}
		var m Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return opts, experiment.Errorf("reproduce --merge: %s: shard.json: %v", d, err)
		}
		sh, err := experiment.ParseShard(m.Shard)
		if err != nil {
			return opts, experiment.Errorf("reproduce --merge: %s: shard.json: %v", d, err)
		}
		if i == 0 {
			opts = Options{Select: m.Select, Quick: m.Quick, DataDir: m.DataDir, Version: m.Version}
			count = sh.Count
		}
		switch {
		case sh.Count != count:
			return opts, experiment.Errorf("reproduce --merge: %s is shard %s, %s one of %d: the shards of one reproduction all have the same n", d, m.Shard, dirs[0], count)
		case m.Quick != opts.Quick || !slices.Equal(m.Select, opts.Select) || m.DataDir != opts.DataDir:
			return opts, experiment.Errorf("reproduce --merge: %s was run with other arguments than %s (papers, --quick or --data)", d, dirs[0])
		case m.Version != opts.Version:
			return opts, experiment.Errorf("reproduce --merge: %s was made by fedscope %s, %s by %s: merge shards of one fedscope", d, m.Version, dirs[0], opts.Version)
		}
		if prev, dup := seen[sh.Index]; dup {
			return opts, experiment.Errorf("reproduce --merge: shard %s is both %s and %s", m.Shard, prev, d)
		}
		seen[sh.Index] = d
	}
	var missing []string
	for i := 0; i < count; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return opts, experiment.Errorf("reproduce --merge: missing shard %s: give every shard's directory", strings.Join(missing, ", "))
	}
	return opts, nil
}

// finite reports whether v is a number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
