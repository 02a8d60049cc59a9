package lowrank

import (
	"fmt"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Story implements experiment.Presentation.
func (present) Story(sc experiment.Scenario, _ Config) string {
	if sc.IsSweep() && sc.Sweep.Knob == "clients" {
		return "Paper 001 says FedLRGD's oracle complexity beats FedAvg's as the number of clients m grows. Here m runs from 25 to 400 at one ε: " +
			"FedLRGD pays φmr for its uploads, FedAvg φm per epoch but needs fewer epochs to hold ε as more clients average out its SGD noise, " +
			"so the crossing moves toward FedAvg as m grows in this setup (paper 001, Thm 2–3, Prop. 1)."
	}
	if sc.IsSweep() {
		return "The oracle complexity Γ each racer needs to reach a suboptimality ε and stay there, median over all trials. FedLRGD pays " +
			"its uploads up front, so its Γ hardly grows as ε falls, until its rank r is too small to hold ε; FedAvg is cheap for a loose ε " +
			"but its SGD steps keep jumping back above a tight one. Dashed: Theorem 2's cost and Theorem 3's O(·) slope (paper 001, Thm 2–3)."
	}
	return "FedLRGD works up front: the server interpolates the clients' gradients from r anchor points, the clients upload r weight vectors once, " +
		"then the server descends alone. The rank r trades the accuracy of the interpolated gradient — the plateau it reaches — for cost; " +
		"FedAvg (local SGD) pays an upload every epoch. x plots the race against the federated oracle complexity, the running time of paper 001."
}

// Caption implements experiment.Presentation.
func (present) Caption(sc experiment.Scenario, _ Config) string {
	if sc.IsSweep() && sc.Sweep.Knob == "clients" {
		return "Γ to hold ε against m: FedLRGD's grows like φmr; FedAvg needs fewer epochs as m grows. The crossing moves toward FedAvg."
	}
	if sc.IsSweep() {
		return "Γ to reach ε and stay there (median, all trials): FedLRGD's is flat until its rank is too small; FedAvg's jumps. Dashed: the paper."
	}
	return "FedLRGD pays its uploads up front, then descends alone to a plateau set by its rank r; FedAvg pays an upload every epoch."
}

// Annotations implements experiment.Presentation.
func (present) Annotations(experiment.Scenario, Config) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "suboptimality", Kind: experiment.Plateau, Tol: 0.001, Window: 20, Text: "%s plateaus", Only: []string{"fedlrgd"}},
		{Metric: "suboptimality", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}

// Summarize implements experiment.Presentation: no end-of-run summary.
func (present) Summarize(experiment.Scenario, Config, *experiment.Table) []experiment.RacerSummary {
	return nil
}

// Menu implements experiment.Presentation: the racers of the presets.
func (present) Menu(experiment.Scenario, Config) []experiment.RacerSpec { return nil }

// Looks implements experiment.Presentation: the preset's ranks in order,
// and FedAvg with the looks it has in paper 000's race.
func (present) Looks() map[string]int {
	return map[string]int{"fedlrgd:r=3": 0, "fedlrgd:r=5": 1, "fedlrgd": 2, "fedlrgd:r=40": 3,
		"fedavg:s=1": 0, "fedavg:s=5": 1, "fedavg": 2, "fedavg:s=10": 4, "fedavg:s=2": 5, "fedavg:s=20": 6}
}

// Help implements experiment.Presentation.
func (present) Help(sc experiment.Scenario, _ Config) string {
	if sc.IsSweep() {
		return complexityHelp
	}
	return "Suboptimality F(θ_t) − F* and the gradient norm per epoch; x switches the x axis to the cumulative federated oracle complexity Γ. " +
		"Before the clients work, FedLRGD's server weights its R − r spare samples as a client's and compares the interpolated gradient " +
		fmt.Sprintf("they give at θ⁰ with their true one: a relative error above %g (the notes give it per rank) warns that the rank is too small ", algorithms.InterpolationAlarm) +
		"and the descent can settle at a wrong point, which the descent's own stopping rule (it stops when its gradient estimate grows) cannot see. " +
		"A racer that ends above its start, or more than twice above its own best, is warned about on its last epoch."
}

// Facts implements experiment.Presentation: the problem, FedLRGD's
// interpolation check on the server's spare samples per racer
// (algorithms.FedLRGD.InterpolationCheck: a parameter each, a note, and a
// warning above algorithms.InterpolationAlarm).
func (present) Facts(sc experiment.Scenario, c Config, d *model.Federated) experiment.Facts {
	f := experiment.Facts{
		Summary: fmt.Sprintf("m=%d clients × s=%d, server R=%d, d=%d, S=%d, φ=%s, μ=%s", c.Clients, c.Samples, c.Server, c.Dim, c.Iters,
			experiment.FormatFloat(c.Phi), experiment.FormatFloat(c.Mu)),
		Charts: []string{"suboptimality", "grad_norm"},
		Levels: []experiment.Level{{Metric: "suboptimality", Value: c.Epsilon, Label: "target ε"}},
	}
	tol := c.SVDTol
	how := "given"
	if tol == 0 {
		tol, how = algorithms.DefaultSVDTol, "default"
	}
	f.Params = []experiment.Param{{Name: "server", Value: float64(c.Server), How: "given"}, {Name: "svd_tol", Value: tol, How: how}}
	if d != nil {
		interpolationFacts(&f, sc, c, d)
	}
	for _, r := range resolve(c) {
		if r.spec.Kind == KindFedLRGD && r.rank < c.Server {
			f.Notes = append(f.Notes, fmt.Sprintf("the server holds R=%d samples: a FedLRGD racer of rank r < R weights the R − r beyond its nodes like a client's, (R − r)·r more gradients in epoch 1 than the paper's r²", c.Server))
			break
		}
	}
	return f
}

// interpolationFacts runs FedLRGD's interpolation check for every FedLRGD
// racer: a parameter interp_error_r<r> each (null when r = R leaves no
// spare sample), one note, and a warning for each rank above the alarm.
func interpolationFacts(f *experiment.Facts, sc experiment.Scenario, c Config, d *model.Federated) {
	var parts []string
	for _, r := range resolve(c) {
		if r.spec.Kind != KindFedLRGD {
			continue
		}
		chk, err := algorithms.FedLRGD{Rank: r.rank, Seed: sc.Seed, Tol: c.SVDTol}.InterpolationCheck(d)
		if err != nil {
			continue
		}
		f.Params = append(f.Params, experiment.Param{Name: fmt.Sprintf("interp_error_r%d", r.rank), Value: chk.RelErr,
			How: fmt.Sprintf("computed: relative error of FedLRGD r=%d's interpolated gradient at θ⁰ on the server's %d spare samples", r.rank, chk.Spare)})
		if chk.Spare == 0 {
			parts = append(parts, fmt.Sprintf("r=%d: no spare sample", r.rank))
			continue
		}
		parts = append(parts, fmt.Sprintf("r=%d: %.3g", r.rank, chk.RelErr))
		if chk.Alarm() {
			f.Warnings = append(f.Warnings, chk.Sentence(r.rank))
		}
	}
	if len(parts) > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("interpolation check (relative error at θ⁰ on the server's spare samples; above %g: rank too small): %s",
			algorithms.InterpolationAlarm, strings.Join(parts, ", ")))
	}
}
