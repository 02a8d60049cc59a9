package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/figure"
	"github.com/fedscope/fedscope/experiment/reproduce"
)

// reproduceCommand is `fedscope reproduce [PAPER…|EXPERIMENT…|all] [--out
// DIR] [--quick] [--data DIR] [--shard i/n]` and `fedscope reproduce
// --merge DIR… [--out DIR]`: the papers' claims re-run, judged and written
// as report.md with the figures and the rows (experiment/reproduce).
func (a *app) reproduceCommand(ctx context.Context, args []string) error {
	fs := newFlagSet("reproduce")
	out := fs.String("out", "fedscope-reproduce", "the directory report.md, the figures (SVG) and every experiment's rows go to (created if missing)")
	quick := fs.Bool("quick", false, "a first look in under a minute: fewer trials, the slowest experiments left out")
	data := fs.String("data", "", "a directory with data files the experiments read (pendigits.scale and pendigits.scale.t for Table 3)")
	shard := fs.String("shard", "", "make only every n-th experiment, from the i-th (0 ≤ i < n), for machines that share the work; then --merge")
	merge := fs.Bool("merge", false, "join the shards' directories given as arguments into one report in --out")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return experiment.Errorf("--out \"\": give a directory")
	}
	if err := outDir(*out); err != nil {
		return err
	}
	if *merge {
		if *shard != "" || *quick || *data != "" {
			return experiment.Errorf("reproduce --merge: --shard, --quick and --data belong to the shards' runs; merge takes only --out and the shards' directories")
		}
		return a.reproduceMerge(rest, *out)
	}
	opts := reproduce.Options{Select: rest, Quick: *quick, Version: a.version}
	if *data != "" {
		st, err := os.Stat(*data)
		if err != nil || !st.IsDir() {
			return experiment.Errorf("--data %q: not a directory; give the directory that holds pendigits.scale", *data)
		}
		opts.DataDir = *data
	}
	if *shard != "" || flagsGiven(fs, "shard") {
		if opts.Shard, err = experiment.ParseShard(*shard); err != nil {
			return err
		}
	}
	plan, err := reproduce.NewPlan(a.catalog, opts)
	if err != nil {
		return err
	}
	for _, e := range plan.Run { // refuse a bad experiment before any work
		if _, _, err := plan.Scenario(a.catalog, e); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := a.reproduceRun(ctx, plan, *out); err != nil {
		return err
	}
	if opts.Shard.Count > 0 {
		if err := reproduce.WriteManifest(*out, plan); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "fedscope: reproduce: shard %s made %d experiments in %s into %s; merge the shards with fedscope reproduce --merge DIR…\n",
			opts.Shard, len(plan.Run), roundDuration(time.Since(start)), *out)
		return nil
	}
	return a.writeReport(plan, []string{*out}, *out, start)
}

// reproduceRun makes the plan's experiments with a progress bar on
// standard error; an interrupt stops it within the grace period, the
// finished experiments' files kept.
func (a *app) reproduceRun(ctx context.Context, plan *reproduce.Plan, dir string) error {
	bar := newProgressBar(a.stderr)
	done := make(chan error, 1)
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- reproduce.Run(inner, a.catalog, a.engine, plan, dir, bar.show) }()
	select {
	case err := <-done:
		bar.end()
		if ctx.Err() == nil {
			return err
		}
	case <-ctx.Done():
	}
	cancel()
	t := time.NewTimer(Grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	bar.end()
	return errInterrupted{what: fmt.Sprintf("; the files of the experiments finished so far are in %s (no report.md)", dir)}
}

// reproduceMerge is --merge: the shards' directories checked and joined.
func (a *app) reproduceMerge(dirs []string, out string) error {
	if len(dirs) == 0 {
		return experiment.Errorf("reproduce --merge: no directory given; usage: fedscope reproduce --merge [--out DIR] SHARD-DIR...")
	}
	opts, err := reproduce.ReadManifests(dirs)
	if err != nil {
		return err
	}
	opts.Version = a.version
	plan, err := reproduce.NewPlan(a.catalog, opts)
	if err != nil {
		return err
	}
	return a.writeReport(plan, dirs, out, time.Time{})
}

// writeReport judges the claims on the files in dirs and writes report.md
// and the figures into out, with a one-line summary on standard error.
func (a *app) writeReport(plan *reproduce.Plan, dirs []string, out string, start time.Time) error {
	rep, err := reproduce.Judge(plan, dirs)
	if err != nil {
		return err
	}
	if err := reproduce.CopyFiles(rep, dirs, out); err != nil {
		return err
	}
	if err := rep.Write(out); err != nil {
		return err
	}
	c := rep.Counts()
	took := ""
	if !start.IsZero() {
		took = fmt.Sprintf(" in %s", roundDuration(time.Since(start)))
	}
	fmt.Fprintf(a.stderr, "fedscope: reproduce: %d claims%s: %d reproduced, %d differ, %d not reproducible here, %d not run; %s\n",
		len(rep.Rows), took, c[experiment.Reproduced], c[experiment.Differs], c[experiment.NotHere], c[experiment.NotRun],
		filepath.Join(out, "report.md"))
	return nil
}

func roundDuration(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// outDir makes sure dir is a directory fedscope can write in, creating it.
func outDir(dir string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return experiment.Errorf("--out %q: not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return experiment.Errorf("--out %q: cannot create the directory: %v", dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".fedscope-probe-*")
	if err != nil {
		return experiment.Errorf("--out %q: cannot write in the directory: %v", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// progressBar shows reproduce's progress on standard error: a bar redrawn
// in place on a terminal, one line per experiment elsewhere.
type progressBar struct {
	w     io.Writer
	tty   bool
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar { return &progressBar{w: w, tty: isTerminal(w)} }

func (b *progressBar) show(p reproduce.Progress) {
	if !b.tty {
		switch {
		case p.Finished:
			fmt.Fprintf(b.w, "fedscope: reproduce [%d/%d] %s done in %s\n", p.Index+1, p.Total, p.Name, roundDuration(p.Elapsed))
		case p.Evals == 0:
			fmt.Fprintf(b.w, "fedscope: reproduce [%d/%d] %s: %s\n", p.Index+1, p.Total, p.Name, p.What)
		}
		return
	}
	const width = 24
	frac := float64(p.Index) / float64(p.Total)
	if p.Evals > 0 {
		frac += float64(p.Done) / float64(p.Evals) / float64(p.Total)
	}
	if p.Finished {
		frac = float64(p.Index+1) / float64(p.Total)
	}
	n := int(frac * width)
	detail := ""
	if p.Evals > 0 && !p.Finished {
		detail = fmt.Sprintf(" %d/%d trials", p.Done, p.Evals)
	}
	fmt.Fprintf(b.w, "\r\x1b[K[%s%s] %d/%d %s%s", strings.Repeat("█", n), strings.Repeat("·", width-n), p.Index+1, p.Total, p.Name, detail)
	b.drawn = true
}

// end leaves the bar's line.
func (b *progressBar) end() {
	if b.tty && b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}

// plotFlag is the --plot FILE.svg of run and sweep: checked before the
// work, written after it.
type plotFlag struct{ path string }

// check refuses a --plot that cannot be written, before any work.
func (p plotFlag) check(out string) error {
	if p.path == "" {
		return nil
	}
	if !strings.HasSuffix(strings.ToLower(p.path), ".svg") {
		return experiment.Errorf("--plot %q: the figure is an SVG file; give a name ending in .svg", p.path)
	}
	if out != "" && out != "-" && filepath.Clean(out) == filepath.Clean(p.path) {
		return experiment.Errorf("--plot %q: the same file as --out; give the figure its own name", p.path)
	}
	if st, err := os.Stat(p.path); err == nil && st.IsDir() {
		return experiment.Errorf("--plot %q: a directory; give a file name ending in .svg", p.path)
	}
	dir := filepath.Dir(p.path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return experiment.Errorf("--plot %q: the directory %s does not exist", p.path, dir)
	}
	return nil
}

// write draws the panels into the file, whole: a temporary file beside it,
// renamed over it.
func (p plotFlag) write(title string, panels []figure.Panel) error {
	tmp, err := os.CreateTemp(filepath.Dir(p.path), "."+filepath.Base(p.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("--plot %s: %v", p.path, err)
	}
	if err := figure.Write(tmp, title, panels, 0); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("--plot %s: %v", p.path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("--plot %s: %v", p.path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p.path)
}

// panelsOf makes the figure's panels from charts and a table written as
// CSV and read back: the figure shows the rows the CSV holds.
func panelsOf(charts []experiment.Chart, write func(io.Writer, experiment.Format) error) ([]figure.Panel, error) {
	frame, err := experiment.FrameOf(write)
	if err != nil {
		return nil, err
	}
	var out []figure.Panel
	for _, c := range charts {
		if !c.TableOnly {
			out = append(out, figure.Panel{Title: c.Caption, Chart: c, Frame: frame})
		}
	}
	return out, nil
}
