package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

// metricChart is one chart of the newton and lowrank run views.
type metricChart struct {
	caption string
	get     func(r *algorithms.Round) float64
	log     bool // a log axis (when the global toggle is on)
}

// familyCharts chooses the two charts of a family: test MSE (or accuracy,
// for classification) and the distance to KRR for newton; suboptimality and
// gradient norm for lowrank.
func (m *Model) familyCharts() [2]metricChart {
	if m.sc.Family == experiment.FamilyLowRank {
		return [2]metricChart{
			{"suboptimality F(θ_t) − F*", func(r *algorithms.Round) float64 { return r.Subopt }, true},
			{"gradient norm ‖∇F(θ_t)‖", func(r *algorithms.Round) float64 { return r.GradNorm }, true},
		}
	}
	first := metricChart{"test MSE", func(r *algorithms.Round) float64 { return r.TestMSE }, false}
	if m.classification() {
		first = metricChart{"test accuracy", func(r *algorithms.Round) float64 { return r.TestAcc }, false}
	}
	return [2]metricChart{first, {"distance to KRR ‖W_t − W_KRR‖", func(r *algorithms.Round) float64 { return r.EstError }, true}}
}

// classification reports whether the rounds carry a test accuracy.
func (m *Model) classification() bool {
	for _, rs := range m.table.Rounds {
		if len(rs) > 0 {
			return !math.IsNaN(rs[0].TestAcc)
		}
	}
	return false
}

// familyChartsView draws the two charts of a newton or lowrank run; for
// lowrank the x axis is rounds (epochs) or, toggled with x, the cumulative
// federated oracle complexity on a log scale.
func (m *Model) familyChartsView(w, h int) string {
	h1 := (h - 2 - 2) / 2
	h2 := h - 2 - h1
	charts := m.familyCharts()
	oracle := m.sc.Family == experiment.FamilyLowRank && m.oracleX
	var lo, hi float64
	points := m.sc.Rounds
	if oracle {
		lo, hi = m.oracleRange()
		points = max(2, w-7-3-2)
	}
	var out []string
	for c, ch := range charts {
		logY := ch.log && m.logY
		curves := make([]series, len(m.table.Labels))
		for i := range m.table.Labels {
			look := lookOf(i)
			rs := m.table.Rounds[i]
			var vals []float64
			if oracle {
				vals = resampleOracle(rs, ch.get, lo, hi, points)
			} else {
				vals = make([]float64, len(rs))
				for k := range rs {
					vals[k] = ch.get(&rs[k])
				}
			}
			curves[i] = series{values: vals, glyph: look.charSet(), color: look.color}
		}
		spec := chartSpec{width: w, height: h1, rounds: points, logY: logY, curves: curves, color: m.styles.color, tight: !ch.log}
		if c == 1 {
			spec.height, spec.xAxis = h2, true
			if oracle {
				spec.xLabel = func(v float64) string {
					return shortNumber(math.Pow(10, lo+(v-1)/float64(points-1)*(hi-lo)))
				}
			}
		}
		scale := "log"
		if !logY {
			scale = "linear"
		}
		note := " (" + scale + ")"
		if c == 0 && m.sc.Family == experiment.FamilyLowRank {
			if oracle {
				note += "   x: oracle complexity Γ (log) · x toggles"
			} else {
				note += "   x: epochs · x toggles oracle complexity"
			}
		}
		out = append(out, m.styles.caption.Render(ch.caption)+m.styles.muted.Render(note), plotChart(spec))
	}
	return strings.Join(out, "\n")
}

// oracleRange returns log10 of the smallest and largest oracle complexity
// received so far.
func (m *Model) oracleRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, rs := range m.table.Rounds {
		for k := range rs {
			if v := rs[k].Oracle; v > 0 {
				lo, hi = math.Min(lo, math.Log10(v)), math.Max(hi, math.Log10(v))
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	if hi-lo < 1e-9 {
		hi = lo + 1
	}
	return lo, hi
}

// resampleOracle samples a racer's curve at points log-spaced oracle
// complexities from 10^lo to 10^hi: the value of the last epoch whose
// cumulative cost is at most x (NaN before the first).
func resampleOracle(rs []algorithms.Round, get func(*algorithms.Round) float64, lo, hi float64, points int) []float64 {
	out := make([]float64, points)
	k := -1
	for p := range out {
		x := math.Pow(10, lo+float64(p)/float64(points-1)*(hi-lo)) * (1 + 1e-12)
		for k+1 < len(rs) && rs[k+1].Oracle <= x {
			k++
		}
		out[p] = math.NaN()
		if k >= 0 {
			out[p] = get(&rs[k])
		}
	}
	return out
}

// shortNumber writes a tick label in at most about five cells: 950, 12k, 3.4M.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// newDataInput is the prompt for a data file path.
func newDataInput(current string) textinput.Model {
	ti := textinput.New()
	ti.Prompt = "data file: "
	ti.Placeholder = "path to a LIBSVM or .csv file"
	ti.CharLimit = 4096
	ti.SetValue(current)
	ti.Focus()
	return ti
}

// handleDataInput drives the data-file prompt: enter loads the file (or
// explains why it cannot be read, keeping the prompt open), esc cancels.
func (m *Model) handleDataInput(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.screen = screenRun
		m.render()
		return nil
	case "enter":
		path := strings.TrimSpace(m.dataInput.Value())
		if path == "" {
			m.dataErr = "type the path of a data file, or esc to cancel"
			m.render()
			return nil
		}
		sc, err := experiment.WithData(m.sc, path)
		if err != nil {
			m.dataErr = err.Error()
			m.render()
			return nil
		}
		m.screen, m.dataErr = screenRun, ""
		m.sc = sc
		return m.restart()
	}
	var cmd tea.Cmd
	m.dataInput, cmd = m.dataInput.Update(msg)
	m.dataErr = ""
	m.render()
	return cmd
}

// dataView is the data-file prompt screen.
func (m *Model) dataView(w, h int) string {
	lines := []string{
		m.styles.pickerTitle.Render("Race on your own data"), "",
		"A LIBSVM file (label index:value …) or a .csv file (label first; a header line",
		"of names is skipped). Features are scaled to [0,1] on the training part, 20 %",
		"is held out for testing, 2000 random Fourier features, bandwidth from the",
		"median distance, λ = 1e-4. Racers: KRR, DKRR, FedNewton, FedAvg, FedProx.", "",
		m.dataInput.View(), "",
	}
	if m.dataErr != "" {
		lines = append(lines, strings.Split(ansi.Wrap(m.styles.errorLine.Render(m.dataErr), w, " /"), "\n")...)
	} else {
		lines = append(lines, m.styles.muted.Render("enter load · esc cancel"))
	}
	return fitBox(strings.Join(lines, "\n"), w, h)
}
