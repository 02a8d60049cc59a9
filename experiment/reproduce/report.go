package reproduce

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/figure"
)

// Row is one claim of the report: the claim, its verdict, and the
// experiments it read.
type Row struct {
	Paper    *experiment.Reproduction
	Claim    experiment.Claim
	Judged   experiment.Judgement
	Measured []*experiment.Measured // nil entries: not available
}

// Report is a reproduction read back from its files.
type Report struct {
	Plan     *Plan
	Rows     []Row
	Measured map[string]*experiment.Measured
	// Figures lists the SVG files drawn, and Undrawn the figures without
	// any of their experiments.
	Figures []string
	Undrawn []string
}

// Judge reads every experiment of the plan from dirs and judges every
// claim of the plan's papers.
func Judge(p *Plan, dirs []string) (*Report, error) {
	rep := &Report{Plan: p, Measured: map[string]*experiment.Measured{}}
	for _, r := range p.Repros {
		for _, e := range r.Experiments {
			m, err := Load(dirs, e.Name)
			if err != nil {
				return nil, err
			}
			if m != nil {
				rep.Measured[e.Name] = m
			}
		}
	}
	for _, r := range p.Repros {
		for _, c := range r.Claims {
			ms := make([]*experiment.Measured, len(c.Experiments))
			missing := make([]error, len(c.Experiments))
			for i, name := range c.Experiments {
				ms[i] = rep.Measured[name]
				if ms[i] == nil {
					missing[i] = p.Skip[name]
					if missing[i] == nil {
						missing[i] = &experiment.Unavailable{Verdict: experiment.NotRun, Reason: "no files of experiment " + name + " were found"}
					}
				}
			}
			rep.Rows = append(rep.Rows, Row{Paper: r, Claim: c, Judged: c.Evaluate(ms, missing), Measured: ms})
		}
	}
	return rep, nil
}

// Panels returns the panels of a figure whose experiments were made: a
// panel without a metric stands for every charted metric of its experiment.
func (rep *Report) Panels(f experiment.Figure) ([]figure.Panel, error) {
	var out []figure.Panel
	for _, p := range f.Panels {
		m := rep.Measured[p.Experiment]
		if m == nil {
			continue
		}
		found := false
		xlabel := p.XLabel
		for _, ch := range m.Charts {
			if p.X != "" && xlabel == "" && (ch.Column == p.X || ch.Metric == p.X) {
				xlabel = ch.Caption
			}
		}
		for _, ch := range m.Charts {
			if p.Metric == "" && !ch.TableOnly || ch.Metric == p.Metric {
				title := p.Title
				if p.Metric == "" && title == "" {
					title = ch.Caption
				}
				out = append(out, figure.Panel{Title: title, Chart: ch, Frame: m.Frame, X: p.X, Linear: p.Linear, XLabel: xlabel})
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("figure %s: experiment %s has no chart %q", f.Name, p.Experiment, p.Metric)
		}
	}
	return out, nil
}

// Write writes report.md and the figures' SVG files into dir.
func (rep *Report) Write(dir string) error {
	for _, r := range rep.Plan.Repros {
		for _, f := range r.Figures {
			panels, err := rep.Panels(f)
			if err != nil {
				return err
			}
			if len(panels) == 0 {
				rep.Undrawn = append(rep.Undrawn, f.Name)
				continue
			}
			err = writeFile(filepath.Join(dir, f.Name+".svg"), func(w io.Writer) error {
				return figure.Write(w, f.Title, panels, f.Columns)
			})
			if err != nil {
				return err
			}
			rep.Figures = append(rep.Figures, f.Name)
		}
	}
	return writeFile(filepath.Join(dir, "report.md"), rep.Markdown)
}

// Counts returns how many claims got each verdict.
func (rep *Report) Counts() map[experiment.Verdict]int {
	out := map[experiment.Verdict]int{}
	for _, r := range rep.Rows {
		out[r.Judged.Verdict]++
	}
	return out
}

// Value is the measured value as the report and the paper guide write it:
// four significant digits, or "—" when nothing was measured.
func Value(j experiment.Judgement) string {
	if !finite(j.Value) {
		return "—"
	}
	return experiment.Short(j.Value)
}

// PaperNumber is the paper's number as the tables write it, "qualitative"
// for a statement without one.
func PaperNumber(c experiment.Claim) string {
	if c.Paper == "" {
		return "qualitative"
	}
	return c.Paper
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// Markdown writes report.md: the claims table, then per paper every claim
// in full (what the paper states, what was measured on which seeds and
// trials, the criterion, the verdict and why, the command), the figures
// and the files.
func (rep *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	rep.summary(&b)
	for _, repro := range rep.Plan.Repros {
		fmt.Fprintf(&b, "\n## Paper %s: %s\n", repro.Paper, repro.Title)
		for _, r := range rep.Rows {
			if r.Paper != repro {
				continue
			}
			rep.claim(&b, r)
		}
	}
	rep.figureList(&b)
	rep.experimentTable(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// summary writes the report's head: the mode, the verdicts' counts, how to
// read the report, and the claims table.
func (rep *Report) summary(b *strings.Builder) {
	p := rep.Plan
	mode := "full"
	if p.Opts.Quick {
		mode = "--quick (fewer trials, slow experiments left out: a first look, not the report)"
	}
	fmt.Fprintf(b, "# fedscope reproduce: the papers' claims, re-run\n\n")
	fmt.Fprintf(b, "fedscope %s · mode: %s · data directory: %s\n\n", p.Opts.Version, mode, dataDir(p.Opts.DataDir))
	counts := rep.Counts()
	fmt.Fprintf(b, "%d claims: %d reproduced, %d differ, %d not reproducible here, %d not run.\n\n",
		len(rep.Rows), counts[experiment.Reproduced], counts[experiment.Differs], counts[experiment.NotHere], counts[experiment.NotRun])
	b.WriteString("Every number below is read from the CSV files in this directory (one per experiment); the figures are drawn " +
		"from the same rows. A claim's command re-runs its experiment and writes the same rows. The verdict is " +
		"*reproduced* when fedscope's number meets the tolerance, *differs* (with the reason) when it does not, " +
		"*not reproducible here* when its data are not available offline. docs/papers.md explains each paper and each choice.\n\n")
	b.WriteString("| claim | paper | where | the paper | fedscope | tolerance | verdict |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", r.Claim.ID, r.Paper.Paper, cell(r.Claim.Where),
			cell(PaperNumber(r.Claim)), Value(r.Judged), cell(tolerance(r.Claim)), r.Judged.Verdict)
	}
}

// figureList lists the figures drawn, in the papers' order, and those that
// could not be.
func (rep *Report) figureList(b *strings.Builder) {
	if len(rep.Figures) > 0 {
		b.WriteString("\n## Figures\n\n")
		for _, r := range rep.Plan.Repros {
			for _, f := range r.Figures {
				for _, name := range rep.Figures {
					if name == f.Name {
						fmt.Fprintf(b, "- [%s](%s.svg): %s\n", f.Name, f.Name, f.Title)
					}
				}
			}
		}
	}
	if len(rep.Undrawn) > 0 {
		fmt.Fprintf(b, "\nNot drawn (none of their experiments was made): %s.\n", strings.Join(rep.Undrawn, ", "))
	}
}

// experimentTable writes the table of experiments: each one's files and the
// command that re-makes them, or why it was not made.
func (rep *Report) experimentTable(b *strings.Builder) {
	p := rep.Plan
	b.WriteString("\n## Experiments\n\n| experiment | rows | command |\n| --- | --- | --- |\n")
	for _, r := range p.Repros {
		for _, e := range r.Experiments {
			m := rep.Measured[e.Name]
			if m == nil {
				why := "not made"
				if err := p.Skip[e.Name]; err != nil {
					why = err.Error()
				}
				fmt.Fprintf(b, "| %s | — | %s |\n", e.Name, cell(why))
				continue
			}
			files := fmt.Sprintf("[%s.csv](%s.csv)", e.Name, e.Name)
			if !m.Sweep {
				files += fmt.Sprintf(", [%s.jsonl](%s.jsonl)", e.Name, e.Name)
			}
			fmt.Fprintf(b, "| %s | %s | `%s` |\n", e.Name, files, m.Command)
		}
	}
}

// claim writes one claim in full.
func (rep *Report) claim(b *strings.Builder, r Row) {
	c, j := r.Claim, r.Judged
	fmt.Fprintf(b, "\n### `%s` · %s: %s\n\n", c.ID, c.Where, j.Verdict)
	paper := c.States
	if c.Paper != "" {
		paper += " (" + c.Paper + ")"
	}
	fmt.Fprintf(b, "- **The paper:** %s\n", paper)
	if j.Verdict == experiment.Reproduced || j.Verdict == experiment.Differs {
		fmt.Fprintf(b, "- **fedscope:** %s", Value(j))
		if j.Text != "" {
			fmt.Fprintf(b, ": %s", j.Text)
		}
		fmt.Fprintf(b, " (%s)\n", rep.basis(r))
	}
	if c.Criterion != "" {
		fmt.Fprintf(b, "- **Criterion:** %s; tolerance %s\n", c.Criterion, tolerance(c))
	}
	fmt.Fprintf(b, "- **Verdict:** %s", j.Verdict)
	if j.Why != "" {
		fmt.Fprintf(b, ": %s", j.Why)
	}
	b.WriteString("\n")
	for _, m := range r.Measured {
		if m != nil {
			fmt.Fprintf(b, "- **Re-run:** `%s` ([%s.csv](%s.csv))\n", m.Command, m.Name, m.Name)
		}
	}
}

// basis says what the measurement rests on: seeds, rounds, trials.
func (rep *Report) basis(r Row) string {
	var parts []string
	for _, m := range r.Measured {
		if m == nil {
			continue
		}
		if m.Sweep {
			parts = append(parts, fmt.Sprintf("%s: %d trials per value, seeds %d–%d, %d rounds", m.Name, m.Trials, m.Seed, m.Seed+uint64(m.Trials)-1, m.Rounds))
		} else {
			parts = append(parts, fmt.Sprintf("%s: one run, seed %d, %d rounds", m.Name, m.Seed, m.Rounds))
		}
	}
	return strings.Join(parts, "; ")
}

// tolerance says the claim's rule, or why there is none.
func tolerance(c experiment.Claim) string {
	if c.Offline != "" {
		return ""
	}
	return c.Rule.String()
}

func dataDir(d string) string {
	if d == "" {
		return "none (--data not given)"
	}
	return d
}

// CopyFiles copies the experiments' files from the shard directories into
// dir (merge): the report links them.
func CopyFiles(rep *Report, dirs []string, dir string) error {
	for name := range rep.Measured {
		for _, d := range dirs {
			if same(d, dir) {
				continue
			}
			for _, ext := range []string{".csv", ".jsonl", ".json"} {
				raw, err := os.ReadFile(filepath.Join(d, name+ext))
				if err != nil {
					continue
				}
				if err := writeFile(filepath.Join(dir, name+ext), func(w io.Writer) error { _, err := w.Write(raw); return err }); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// same reports whether two paths name one directory.
func same(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
