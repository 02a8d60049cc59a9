// Package cli is fedscope's command line (docs/design.md, "Command line"): the
// root flags that open the explorer, and the headless subcommands presets,
// run and sweep with their CSV / JSON-lines output and exit statuses.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/fedscope/fedscope/cli/output"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
	"github.com/fedscope/fedscope/tui"
)

// Exit statuses of the command line (docs/design.md, "Command line").
const (
	ExitOK      = 0
	ExitFailure = 1 // the run failed or a racer diverged; rows written so far are kept
	ExitUsage   = 2 // bad input: unknown key, malformed or out-of-range value, bad --out, too large for memory

	// ExitInterrupted follows the shell convention 128 + SIGINT; SIGTERM
	// gives 143 and SIGHUP 129 (see Signal).
	ExitInterrupted = 130
)

// After a signal a headless command has until these moments to end
// (issue 22: the promised status within half a second in every state):
//   - Grace: a command still computing may stop and write its rows itself
//     (a racer stops at its next round, but a factorisation under way in
//     the data preparation cannot be interrupted); then Main writes them;
//   - writeDeadline: a write of the rows still under way is stopped between
//     two lines, the lines so far kept (a file with them put in place), and
//     Main returns, whether or not the write goroutine has noticed (it may
//     be blocked on a reader that stopped reading);
//   - giveUp: should putting the file in place hang (a stalled disk), Main
//     returns without it.
const (
	Grace         = 150 * time.Millisecond
	writeDeadline = 250 * time.Millisecond
	giveUp        = 400 * time.Millisecond
)

// Main runs fedscope with the arguments after the program name and returns
// the exit status: a headless subcommand, or the explorer. Cancelling ctx
// interrupts it: the rows computed so far are written and the status is
// 128 + the signal's number when the cancellation cause is a Signal (130
// otherwise).
func Main(ctx context.Context, args []string, version string, stdout, stderr io.Writer) int {
	app := &app{version: version, catalog: registry.Catalog(), engine: experiment.NewEngine(), stdout: stdout, stderr: stderr, onRow: hooks.row}
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-version", "version":
			fmt.Fprintln(stdout, "fedscope", version)
			return ExitOK
		case "presets", "run", "sweep", "merge":
			return app.headless(ctx, args)
		case "reproduce":
			return app.report(ctx, app.reproduceCommand(ctx, args[1:]))
		case "help":
			return app.report(ctx, app.help(ctx, args[1:]))
		case "lesson":
			explorer.Store(true)
			defer explorer.Store(false)
			return app.lessonCommand(ctx, args[1:])
		}
		if !strings.HasPrefix(args[0], "-") {
			return app.report(ctx, experiment.Errorf("unknown command %q%s; commands: %s (fedscope help lists them)",
				args[0], experiment.DidYouMean(args[0], commandNames()), strings.Join(commandNames(), ", ")))
		}
	}
	explorer.Store(true)
	defer explorer.Store(false)
	return app.explore(ctx, args)
}

// hooks are set by the signal tests, which run fedscope in a child
// process: they learn when k rows have been computed, and when the rows
// begin to be written.
var hooks struct{ row, write func() }

// explorer is true while the explorer owns the terminal (Interrupt then
// leaves the terminal's restoration to it).
var explorer atomic.Bool

// app is one invocation: the families, the engine and the output streams.
type app struct {
	version        string
	catalog        *experiment.Catalog
	engine         *experiment.Engine
	stdout, stderr io.Writer

	mu  sync.Mutex                    // guards job
	job *job                          // the headless command's rows, once its target is open
	out atomic.Pointer[output.Target] // the target being written, once its write begins

	onRow func() // tests: called after every row added (a round, an evaluation)
}

// headless runs a subcommand in its own goroutine so that, after an
// interrupt, neither a command stuck in work that cannot be interrupted (a
// large factorisation) nor a long or blocked write holds fedscope beyond
// the deadlines above: Main writes the rows computed so far itself, stops
// a write under way between two lines, and returns.
func (a *app) headless(ctx context.Context, args []string) int {
	h := &afterSignal{a: a, ctx: ctx, done: make(chan int, 2)}
	go func() { h.done <- h.report(a.command(ctx, args)) }()
	select {
	case status := <-h.done:
		return status
	case <-ctx.Done():
	}
	h.timer = time.NewTimer(Grace)
	defer h.timer.Stop()
	if status, ok := h.wait(Grace); ok {
		return status
	}
	return h.finish()
}

// afterSignal is a headless command after a signal.
type afterSignal struct {
	a     *app
	ctx   context.Context
	done  chan int // the status, once the command (or Main's write) has reported
	timer *time.Timer
	said  atomic.Bool // one message: the command's, or Main's after the deadline
}

// report reports err as the command's message unless one was given.
func (h *afterSignal) report(err error) int {
	if err != nil && h.said.Swap(true) {
		return h.a.reportTo(h.ctx, err, io.Discard)
	}
	return h.a.report(h.ctx, err)
}

// wait waits d for the command's status.
func (h *afterSignal) wait(d time.Duration) (int, bool) {
	h.timer.Reset(d)
	select {
	case status := <-h.done:
		return status, true
	case <-h.timer.C:
		return 0, false
	}
}

// finish is headless after Grace: the rows so far are written (by Main
// when the command still computes), a write still under way at
// writeDeadline is stopped between two lines, and the status returned.
func (h *afterSignal) finish() int {
	a := h.a
	a.mu.Lock()
	j := a.job
	a.mu.Unlock()
	if j == nil && a.out.Load() == nil {
		output.RemoveTemps() // a target opened for rows that never came
		return h.report(errInterrupted{what: " before the run wrote anything"})
	}
	if j != nil && a.out.Load() == nil {
		// Still computing: Main writes the rows so far.
		go func() {
			if err, wrote := j.finishOnce(a, true); wrote {
				h.done <- h.report(err)
			}
		}()
	}
	if status, ok := h.wait(writeDeadline - Grace); ok {
		return status
	}
	t := a.out.Load()
	if t == nil { // the write has not begun: nothing to keep
		output.RemoveTemps()
		return h.report(errInterrupted{what: " before the rows were written"})
	}
	stopped := make(chan string, 1)
	go func() {
		lines, all := t.Stop()
		if all {
			stopped <- fmt.Sprintf(" while writing the rows; wrote all %d lines of the output to %s", lines, t.Describe())
		} else {
			stopped <- stoppedWhat(t, lines)
		}
	}()
	h.timer.Reset(giveUp - writeDeadline)
	select {
	case what := <-stopped:
		output.RemoveTemps()
		return h.report(errInterrupted{what: what})
	case <-h.timer.C:
		return h.report(errInterrupted{what: fmt.Sprintf(" while writing the rows to %s, which did not answer in time: it holds whole lines only, or is as it was", t.Describe())})
	}
}

// explore parses the root flags (--preset, --seed, --rounds, --set) and opens
// the explorer.
func (a *app) explore(ctx context.Context, args []string) int {
	fs := newFlagSet("fedscope")
	var sf scenarioFlags
	sf.register(fs)
	var vf viewFlags
	vf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return a.report(ctx, err)
	}
	sc, err := sf.scenario(a.catalog)
	if err != nil {
		return a.report(ctx, err)
	}
	view, err := vf.view(sc)
	if err != nil {
		return a.report(ctx, err)
	}
	if code, ok := a.needTerminal(sc); !ok {
		return code
	}
	var exitLine string
	opts := []tui.Option{tui.WithVersion(a.version), tui.WithExitLine(func(line string) { exitLine = line }), tui.WithView(view)}
	if inert := sf.inert(sc); len(inert) > 0 {
		opts = append(opts, tui.WithNotice("warning: "+strings.Join(inert, "; ")))
	}
	return a.openExplorer(ctx, sc, opts, &exitLine)
}

// needTerminal refuses to draw the explorer into a pipe, saying how to run
// the scenario headless instead.
func (a *app) needTerminal(sc experiment.Scenario) (int, bool) {
	if isTerminal(a.stdout) {
		return 0, true
	}
	cmd := "run"
	if sc.IsSweep() {
		cmd = "sweep"
	}
	fmt.Fprintf(a.stderr, "fedscope: standard output is not a terminal; for headless output run: fedscope %s --preset %s --format csv\n",
		cmd, sc.Preset)
	return ExitUsage, false
}

// openExplorer runs the explorer until the user quits or ctx is cancelled,
// then prints the command line of what was on screen when it differs from
// the start.
func (a *app) openExplorer(ctx context.Context, sc experiment.Scenario, opts []tui.Option, exitLine *string) int {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ticker := time.NewTicker(checkEvery)
	defer ticker.Stop()
	probe := probeOf(a.stdout)
	go watchTerminal(ctx, cancel, probe, ticker.C)
	err := tui.Run(ctx, a.catalog, a.engine, sc, a.stdout, opts...)
	if why := probe.lost(); why != "" && ctx.Err() == nil {
		// Bubble Tea saw it first: a read error ends it as if killed.
		cancel(terminalGone{why: why})
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(a.stderr, "fedscope: %s\n", oneLine(err))
		return ExitFailure
	}
	if ctx.Err() != nil {
		var gone terminalGone
		if errors.As(context.Cause(ctx), &gone) {
			fmt.Fprintf(a.stderr, "fedscope: %v; the explorer ended\n", gone)
		}
		return statusOf(ctx)
	}
	if *exitLine != "" {
		fmt.Fprintln(a.stdout, *exitLine) // what was on screen, to run again
	}
	return ExitOK
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && isatty.IsTerminal(f.Fd())
}

// command runs a headless subcommand.
func (a *app) command(ctx context.Context, args []string) error {
	switch args[0] {
	case "presets":
		return a.listPresets(args[1:])
	case "run", "sweep":
		j, err := a.prepare(ctx, args[0], args[1:])
		if err != nil {
			return err
		}
		return a.execute(ctx, j)
	case "merge":
		return a.merge(ctx, args[1:])
	case "reproduce":
		return a.reproduceCommand(ctx, args[1:])
	}
	return experiment.Errorf("unknown command %q; commands: presets, run, sweep, merge, reproduce", args[0])
}

// stoppedWhat says what a write stopped by Main's deadline left: the whole
// lines the target received, or a file as it was when none.
func stoppedWhat(t *output.Target, lines int64) string {
	switch {
	case lines == 0 && t.Kind != output.Stdout && t.Kind != output.Direct:
		return fmt.Sprintf(" before the rows were written; %s is as it was", t.Describe())
	case lines == 0:
		return fmt.Sprintf(" while writing the rows: stopped before the first line reached %s; the rows are lost", t.Describe())
	}
	return fmt.Sprintf(" while writing the rows: stopped after the first %d lines of the output, which %s has, whole; the rest are lost",
		lines, t.Describe())
}

// errInterrupted reports a headless command stopped by a signal (or a
// cancelled context).
type errInterrupted struct {
	what string // what happened to the rows
}

func (e errInterrupted) Error() string { return "interrupted" + e.what }

// report writes err as one line (several racers' divergences, joined by
// errors.Join with newlines, are separated by "; ") and returns the exit
// status.
func (a *app) report(ctx context.Context, err error) int { return a.reportTo(ctx, err, a.stderr) }

// reportTo is report with the message written to stderr.
func (a *app) reportTo(ctx context.Context, err error, stderr io.Writer) int {
	var ie *experiment.InputError
	var help helpRequest
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, new(errInterrupted)):
		fmt.Fprintf(stderr, "fedscope: %s\n", oneLine(err))
		return statusOf(ctx)
	case errors.As(err, &help):
		if h := help; h.cmd == "fedscope" {
			a.writeOverview(a.stdout)
		} else {
			a.writeCommandHelp(a.stdout, h.cmd, h.fs)
		}
		return ExitOK
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "fedscope: %s\n", oneLine(err))
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "fedscope: %s\n", oneLine(err))
		return ExitFailure
	}
}

func oneLine(err error) string {
	return strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(err.Error())
}

func (a *app) listPresets(args []string) error {
	if err := parseFlags(newFlagSet("presets"), args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, p := range a.catalog.Presets() {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Summary)
	}
	return tw.Flush()
}

// job is a headless run or sweep between its preparation and its output:
// the scenario, the format, the opened target and the table the rows go
// into. Its rows are written once, by whichever comes first: the command
// when it ends, or Main after an interrupt and the grace period.
type job struct {
	ctx    context.Context // the command's: cancelled by a signal
	cmd    string          // "run" or "sweep"
	sc     experiment.Scenario
	format experiment.Format
	target *output.Target

	mu      sync.Mutex // guards the table and written
	written bool
	run     *experiment.Table
	sweep   *experiment.SweepTable
	sums    []experiment.RacerSummary // run: the family's per-racer summaries, written after the rows

	// A sharded sweep (--shard) writes its raw evaluations for fedscope
	// merge instead of the table (experiment.ShardWriter).
	shard *experiment.ShardHeader
	part  experiment.Shard
	evals []experiment.TrialResult

	plot  plotFlag         // --plot FILE.svg: the figure, drawn after the rows
	facts experiment.Facts // run: the facts on the prepared data (the plot's levels)
}

// jobFlags are the flags of run and sweep beyond the scenario's: where
// and how the rows go, and (sweep only) trials and shard.
type jobFlags struct {
	format, out, plot *string
	trials, shard     *string // nil for run
}

func registerJobFlags(fs *flag.FlagSet, cmd string) jobFlags {
	var jf jobFlags
	if cmd == "sweep" {
		jf.trials = fs.String("trials", "", "trials per swept value (default: the preset's)")
		jf.shard = fs.String("shard", "", "compute only shard i of n (0 ≤ i < n) of the (value, trial) grid, as JSON lines for fedscope merge")
	}
	jf.format = fs.String("format", "", "output format (default: from the --out extension, else csv)")
	jf.out = fs.String("out", "", "write to a file instead of standard output (- is standard output)")
	jf.plot = fs.String("plot", "", "also draw the figure of the rows as an SVG file (gonum/plot), for a slide")
	return jf
}

// sharded reports whether a sweep writes a shard (--shard given).
func (jf jobFlags) sharded(sf *scenarioFlags) bool {
	return jf.shard != nil && (*jf.shard != "" || sf.given("shard"))
}

// outputs refuses contradictory output flags and gives the format and the
// figure to draw.
func (jf jobFlags) outputs(sf *scenarioFlags) (experiment.Format, plotFlag, error) {
	pf := plotFlag{path: *jf.plot}
	switch {
	case *jf.plot == "" && sf.given("plot"):
		return 0, pf, experiment.Errorf("--plot \"\": give a file name ending in .svg")
	case *jf.format == "" && sf.given("format"):
		return 0, pf, experiment.Errorf("--format \"\": allowed formats are csv and jsonl")
	case *jf.out == "" && sf.given("out"):
		return 0, pf, experiment.Errorf("--out \"\": give a file name, or - for standard output")
	}
	if err := pf.check(*jf.out); err != nil {
		return 0, pf, err
	}
	if jf.sharded(sf) {
		if pf.path != "" {
			return 0, pf, experiment.Errorf("--plot with --shard: a shard holds a part of the sweep; draw the figure from the merged table with fedscope sweep --plot")
		}
		if *jf.format != "" && *jf.format != "jsonl" {
			return 0, pf, experiment.Errorf("--format %s with --shard: a shard is written as JSON lines for fedscope merge; give --format to merge instead", *jf.format)
		}
		return experiment.JSONL, pf, nil // whatever the --out extension
	}
	f, err := output.FormatFor(*jf.format, *jf.out)
	return f, pf, err
}

// prepare parses a run or sweep command line, builds and validates the
// scenario, decides the format and opens the output target: everything
// that can be refused is refused here, before any work.
func (a *app) prepare(ctx context.Context, cmd string, args []string) (*job, error) {
	fs := newFlagSet(cmd)
	var sf scenarioFlags
	sf.register(fs)
	jf := registerJobFlags(fs, cmd)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	f, pf, err := jf.outputs(&sf)
	if err != nil {
		return nil, err
	}
	if cmd == "sweep" && !sf.given("preset") {
		return nil, experiment.Errorf("sweep: --preset is required; sweep presets: %s", strings.Join(a.catalog.SweepPresetNames(), ", "))
	}
	sc, err := sf.scenario(a.catalog)
	if err != nil {
		return nil, err
	}
	for _, w := range sf.inert(sc) {
		fmt.Fprintf(a.stderr, "fedscope: warning: %s\n", w)
	}
	j := &job{ctx: ctx, cmd: cmd, format: f, plot: pf}
	switch {
	case cmd == "run" && sc.IsSweep():
		return nil, experiment.Errorf("preset %q is a sweep; run it with: fedscope sweep --preset %s", sc.Preset, sc.Preset)
	case cmd == "run":
		j.run = experiment.NewTable(sc)
	case !sc.IsSweep():
		return nil, experiment.Errorf("preset %q is not a sweep; sweep presets: %s", sc.Preset, strings.Join(a.catalog.SweepPresetNames(), ", "))
	default:
		if err := j.prepareSweep(&sc, &sf, jf); err != nil {
			return nil, err
		}
	}
	j.sc = sc
	if j.target, err = output.Open(ctx, *jf.out, output.Options{Stdout: a.stdout, Inputs: sc.InputFiles()}); err != nil {
		if ctx.Err() != nil { // interrupted while waiting for a FIFO's reader
			return nil, errInterrupted{what: " while waiting for a reader of --out"}
		}
		return nil, err
	}
	return j, nil
}

// prepareSweep reads --trials into the scenario, validates it and makes
// the sweep's table, or with --shard the shard's header.
func (j *job) prepareSweep(sc *experiment.Scenario, sf *scenarioFlags, jf jobFlags) error {
	n := 0
	if sf.given("trials") {
		var err error
		if n, err = experiment.ParseWhole(strings.TrimSpace(*jf.trials), 1, experiment.MaxTrials); err != nil {
			return experiment.Errorf("--trials %q: %v", *jf.trials, err)
		}
		sc.Trials = n
	}
	if err := sc.Validate(); err != nil {
		return err
	}
	var err error
	if j.sweep, err = experiment.NewSweepTable(*sc); err != nil {
		return err
	}
	if !jf.sharded(sf) {
		return nil
	}
	sh, err := experiment.ParseShard(*jf.shard)
	if err != nil {
		return err
	}
	build, err := buildFingerprint()
	if err != nil {
		return err
	}
	if j.shard, err = experiment.NewShardHeader(*sc, sh, buildVersion(), build, sf.shardArgs(n)); err != nil {
		return err
	}
	j.part = sh
	return nil
}

// execute runs a prepared job and writes its rows. An interrupted job
// still writes every row computed so far: nothing is lost.
func (a *app) execute(ctx context.Context, j *job) error {
	a.mu.Lock()
	a.job = j
	a.mu.Unlock()
	if j.run != nil {
		return a.runRace(ctx, j)
	}
	add := func(r experiment.TrialResult) {
		j.mu.Lock()
		defer j.mu.Unlock()
		if !j.written {
			j.sweep.Add(r)
			if j.shard != nil {
				j.evals = append(j.evals, r)
			}
			if a.onRow != nil {
				a.onRow()
			}
		}
	}
	var err error
	if j.shard != nil {
		err = experiment.RunSweepShard(ctx, j.sc, j.part, add)
	} else {
		err = experiment.RunSweep(ctx, j.sc, add)
	}
	var ie *experiment.InputError
	if errors.As(err, &ie) && j.sweep.Done() == 0 {
		j.abort()
		return err
	}
	// Like run: whatever was computed is written, on interrupt or failure.
	if werr := j.finish(a, errors.Is(err, context.Canceled)); werr != nil || errors.Is(err, context.Canceled) {
		return werr
	}
	if err == nil {
		err = j.drawPlot()
	}
	return err
}

// drawPlot writes the --plot figure of a finished run or sweep: the charts
// the family declares, drawn from the table's CSV rows.
func (j *job) drawPlot() error {
	if j.plot.path == "" {
		return nil
	}
	var charts []experiment.Chart
	var write func(io.Writer, experiment.Format) error
	if j.run != nil {
		charts, write = experiment.ChartsOfRun(j.sc, j.facts), j.run.Write
	} else {
		charts, write = experiment.ChartsOfSweep(j.sc), j.sweep.Write
	}
	panels, err := panelsOf(charts, write)
	if err != nil {
		return fmt.Errorf("--plot %s: %v", j.plot.path, err)
	}
	title := fmt.Sprintf("fedscope %s: %s", j.sc.Preset, j.facts.Summary)
	if j.run == nil {
		title = fmt.Sprintf("fedscope %s: %s", j.sc.Preset, j.sc.Summary())
	}
	return j.plot.write(title, panels)
}

// runRace is `fedscope run`: one row per (racer, round).
func (a *app) runRace(ctx context.Context, j *job) error {
	res, err := a.engine.Run(ctx, j.sc, experiment.Observer{Round: func(p experiment.Point) {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.written {
			return
		}
		j.run.Add(p)
		if a.onRow != nil {
			a.onRow()
		}
	}})
	interrupted := errors.Is(err, context.Canceled)
	if err != nil && !interrupted {
		j.abort()
		return err
	}
	if res.Racers != nil {
		j.mu.Lock()
		j.facts = res.Facts
		a.describe(res.Facts, roundWarnings(j.run))
		if j.format == experiment.JSONL {
			j.run.Header = experiment.NewHeader(j.sc, res.Facts)
		}
		j.mu.Unlock()
	}
	// A family may summarise the finished run per racer (paper 000: rounds to
	// converge and the saving against FedAvg s=1): stderr lines, and records
	// after the rows in JSON lines.
	if !interrupted && res.Racers != nil {
		j.mu.Lock()
		j.sums = j.sc.Family.Summarize(j.sc, j.run)
		j.mu.Unlock()
	}
	if err := j.finish(a, interrupted); err != nil || interrupted {
		return err
	}
	for _, s := range j.sums {
		fmt.Fprintf(a.stderr, "fedscope: summary: %s\n", s.Text)
	}
	if err := j.drawPlot(); err != nil {
		return err
	}
	if failed := res.Failed(); len(failed) > 0 {
		return errors.Join(failed...)
	}
	return nil
}

// roundWarnings lists the rounds' warnings, racers in order and rounds
// ascending (not in arrival order, which varies with scheduling), each text
// once.
func roundWarnings(t *experiment.Table) []string {
	var out []string
	seen := map[string]bool{}
	for i, rs := range t.Rounds {
		for k := range rs {
			if w := rs[k].Warning; w != "" && !seen[w] {
				seen[w] = true
				out = append(out, fmt.Sprintf("%s, round %d: %s", t.Labels[i], rs[k].Index, w))
			}
		}
	}
	return out
}

// rows returns the number of rows the job's table holds; j.mu is held.
func (j *job) rows() int {
	switch {
	case j.run != nil:
		return j.run.Len()
	case j.shard != nil:
		return len(j.evals)
	}
	return j.sweep.Rows()
}

// writeTo writes the job's table; j.mu is held.
func (j *job) writeTo(w io.Writer) error {
	if j.shard != nil {
		// Complete, the shard ends with an end line; interrupted, it has
		// none and merge refuses it until it is run again.
		sw := experiment.NewShardWriter(w, j.shard)
		for _, r := range j.evals {
			sw.Add(r)
		}
		return sw.Close()
	}
	if j.run == nil {
		return j.sweep.Write(w, j.format)
	}
	if err := j.run.Write(w, j.format); err != nil || j.format != experiment.JSONL {
		return err
	}
	for _, s := range j.sums {
		b, _ := s.MarshalJSON()
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}

// abort gives the target up unwritten (the run failed before any row).
func (j *job) abort() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.written {
		j.written = true
		j.target.Abort()
	}
}

// finish writes the job's rows to its target, once: later calls do
// nothing. When writing fails the rows are kept in a rescue file and the
// error says where. An interrupted job returns errInterrupted saying how
// many rows it wrote; one interrupted before its first row leaves the
// target as it was.
func (j *job) finish(a *app, interrupted bool) error {
	err, _ := j.finishOnce(a, interrupted)
	return err
}

// finishOnce is finish that also reports whether this call wrote the rows
// (false: an earlier call had, and this one waited for it to end).
func (j *job) finishOnce(a *app, interrupted bool) (error, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.written {
		return nil, false
	}
	j.written = true
	return j.writeRows(a, interrupted), true
}

// writeRows writes the job's rows to its target (see finish); j.mu is
// held.
func (j *job) writeRows(a *app, interrupted bool) error {
	n := j.rows()
	if interrupted && n == 0 {
		j.target.Abort()
		what := " before any row was computed"
		if j.target.Kind != output.Stdout {
			what += "; --out " + j.target.Describe() + " is as it was"
		}
		return errInterrupted{what: what}
	}
	a.out.Store(j.target)
	if hooks.write != nil {
		hooks.write()
	}
	err := j.target.Write(j.writeTo)
	if errors.Is(err, output.ErrStopped) { // Main's deadline after a signal
		return errInterrupted{what: stoppedWhat(j.target, j.target.Lines())}
	}
	if err != nil {
		where, rerr := output.Rescue(output.Ext(j.format), j.writeTo)
		if rerr != nil {
			return fmt.Errorf("--out %s: %v; the %d rows could not be kept either: %v", j.target.Describe(), err, n, rerr)
		}
		return fmt.Errorf("--out %s: %v; the %d rows are in %s instead", j.target.Describe(), err, n, where)
	}
	switch {
	case interrupted:
		return errInterrupted{what: fmt.Sprintf("; wrote the %d rows computed so far to %s", n, j.target.Describe())}
	case j.ctx != nil && j.ctx.Err() != nil: // the signal came while the rows were written
		return errInterrupted{what: fmt.Sprintf(" while writing the rows; wrote all %d rows to %s", n, j.target.Describe())}
	}
	return nil
}

// describe writes to stderr how the data were prepared (the parameters and
// how each was chosen), the family's notes and every warning: a run outside
// the regime its paper covers is never silent.
func (a *app) describe(f experiment.Facts, warnings []string) {
	if len(f.Params) > 0 {
		parts := make([]string, len(f.Params))
		for i, p := range f.Params {
			parts[i] = fmt.Sprintf("%s=%s (%s)", p.Name, experiment.FormatFloat(p.Value), p.How)
		}
		fmt.Fprintf(a.stderr, "fedscope: %s\n", strings.Join(parts, ", "))
	}
	for _, n := range f.Notes {
		fmt.Fprintf(a.stderr, "fedscope: note: %s\n", n)
	}
	for _, w := range append(f.Warnings, warnings...) {
		fmt.Fprintf(a.stderr, "fedscope: warning: %s\n", w)
	}
}
