package newton

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// metrics are the per-round metrics of a run (docs/papers.md §4.7, §6).
var metrics = []experiment.Metric{
	{Name: "test_mse", Caption: "test MSE", Short: "MSE"},
	{Name: "test_acc", Caption: "test accuracy", Short: "acc"},
	{Name: "grad_norm", Caption: "gradient norm ‖H W_t − b‖", Short: "‖∇‖", Log: true},
	{Name: "krr_dist", Caption: "distance to KRR ‖W_t − W_KRR‖", Short: "‖W−W_KRR‖", Log: true},
}

// Metrics implements experiment.Family.
func (Family) Metrics(experiment.Scenario) []experiment.Metric { return metrics }

// Prepared is the data of a run, shared read-only by its racers and re-runs.
type Prepared struct {
	Ridge *model.Ridge
	// Bandwidth σ² and λ the problem was built with, and how each was
	// chosen: "given", "median heuristic" or "tuned".
	Bandwidth, Lambda       float64
	HowBandwidth, HowLambda string
	Notes                   []string // how defaults were resolved (the tuning's choice and why)
	Tuning                  *Tuning  // what tuning tried; nil when not tuned
}

// Racers implements experiment.Family: unpinned parameters follow the
// scenario; racers that resolve to the same algorithm are kept once.
func (Family) Racers(sc experiment.Scenario) []experiment.Racer {
	c := cfg(sc)
	var out []experiment.Racer
	seen := map[string]bool{}
	for _, spec := range c.Racers {
		var label string
		var alg algorithms.RidgeAlgorithm
		id := spec.Kind
		switch spec.Kind {
		case KindKRR:
			label, alg = "KRR", algorithms.KRR{}
		case KindDKRR:
			label, alg = "DKRR", algorithms.DKRR{}
		case KindFedNewton:
			label, alg = "FedNewton", algorithms.FedNewton{}
		case KindFedAvg:
			s, _ := spec.Opt("s")
			eta, pinned := spec.Opt("eta")
			steps := int(s)
			if steps == 0 {
				steps = c.LocalSteps
			}
			if !pinned {
				eta = c.Eta
			}
			label = fmt.Sprintf("FedAvg s=%d", steps)
			if pinned && eta != c.Eta {
				label += " eta=" + experiment.FormatFloat(eta)
			}
			id = fmt.Sprintf("fedavg/%d/%v", steps, eta)
			alg = algorithms.RidgeFedAvg{Eta: eta, LocalSteps: steps}
		case KindFedProx:
			mu, pinned := spec.Opt("mu")
			if !pinned {
				mu = c.LambdaProx
			}
			label = "FedProx"
			if pinned && mu != c.LambdaProx {
				label += " mu=" + experiment.FormatFloat(mu)
			}
			id = fmt.Sprintf("fedprox/%v", mu)
			alg = algorithms.RidgeFedProx{Mu: mu}
		default:
			continue // Validate reports it
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, experiment.Racer{Label: label, Spec: spec, Run: runner(alg)})
	}
	return out
}

// runner adapts a ridge racer to the engine.
func runner(alg algorithms.RidgeAlgorithm) func(context.Context, any, int, func(experiment.Round)) error {
	return func(ctx context.Context, data any, rounds int, emit func(experiment.Round)) error {
		return alg.Run(ctx, data.(*Prepared).Ridge, rounds, func(r algorithms.RidgeRound) {
			emit(experiment.Round{Index: r.Index, Theta: r.W, Values: []float64{r.TestMSE, r.TestAcc, r.GradNorm, r.KRRDist}})
		})
	}
}

// DataKey implements experiment.Family: the data configuration, the seed
// and the data files' size and modification time.
func (Family) DataKey(sc experiment.Scenario) string {
	d := cfg(sc).Data
	return fmt.Sprintf("%#v|%d|%s", d, sc.Seed, fileStamp(d.DataPath, d.TestPath))
}

func fileStamp(paths ...string) string {
	s := ""
	for _, p := range paths {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil {
			s += fmt.Sprintf("%s:%d:%d;", p, st.Size(), st.ModTime().UnixNano())
		}
	}
	return s
}

// Prepare implements experiment.Family: the synthetic federation, or the
// data file dealt to the clients, mapped to random features; with tune=true
// the bandwidth and λ are first chosen on a validation split (tune).
func (Family) Prepare(ctx context.Context, sc experiment.Scenario, report func(experiment.Progress)) (any, error) {
	n := cfg(sc).Data
	var clients []*datasets.Set
	var train, test *datasets.Set
	if n.DataPath == "" {
		nd, err := n.synthetic().Generate(sc.Seed)
		if err != nil {
			return nil, &experiment.InputError{Msg: err.Error()}
		}
		clients, test = nd.Clients, nd.Test
		if n.Tune {
			train = concat(clients)
		}
	} else {
		var err error
		if train, test, err = loadFiles(ctx, sc); err != nil {
			return nil, err
		}
		if clients, err = partition(ctx, sc, train); err != nil {
			return nil, err
		}
	}
	p := &Prepared{Bandwidth: n.Bandwidth, Lambda: n.Lambda, HowBandwidth: "given", HowLambda: "given"}
	var stats *model.RidgeStats
	switch {
	case n.Tune:
		tu, st, err := tune(ctx, sc, train, clients, test, report)
		if err != nil {
			return nil, err
		}
		p.Tuning, stats = tu, st
		p.Bandwidth, p.Lambda, p.HowBandwidth, p.HowLambda = tu.Bandwidth, tu.Lambda, "tuned", "tuned"
		p.Notes = append(p.Notes, tu.Note())
	case p.Bandwidth == 0:
		med := train.MedianDistance(sc.Seed)
		p.Bandwidth, p.HowBandwidth = med*med, "median heuristic"
		p.Notes = append(p.Notes, fmt.Sprintf("bandwidth σ²=%.3g from the median pairwise distance %.3g", p.Bandwidth, med))
	}
	if stats == nil {
		if report != nil {
			report(experiment.Progress{Stage: "random features"})
		}
		rff, err := model.NewRFFContext(ctx, clients[0].Dim, n.RFFDim, p.Bandwidth, sc.Seed)
		if err != nil {
			return nil, err
		}
		if stats, err = model.NewRidgeStatsContext(ctx, clients, test, rff); err != nil {
			return nil, prepareError(err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := stats.Finish(p.Lambda)
	if err != nil {
		return nil, experiment.Errorf("lambda=%s: %v (bandwidth σ²=%s)", experiment.FormatFloat(p.Lambda), err, experiment.FormatFloat(p.Bandwidth))
	}
	p.Ridge = r
	return p, nil
}

// partition deals a data file's training rows to the clients: IID, by a
// Dirichlet label skew for classes, or Dirichlet sizes for regression.
func partition(ctx context.Context, sc experiment.Scenario, train *datasets.Set) ([]*datasets.Set, error) {
	n := cfg(sc).Data
	m := n.Clients
	var parts [][]int
	var err error
	switch {
	case n.DirichletC > 0 && train.Classes > 0:
		parts, err = datasets.DirichletLabels(train.Labels(), train.Classes, m, n.DirichletC, n.MinSize, sc.Seed)
	case n.DirichletC > 0:
		var sizes []int
		if sizes, err = datasets.DirichletSizes(train.N, m, n.DirichletC, min(10, train.N/m), sc.Seed); err == nil {
			parts = datasets.BySizes(train.N, sizes, sc.Seed)
		}
	default:
		parts, err = datasets.IID(train.N, m, sc.Seed)
	}
	if err != nil {
		return nil, &experiment.InputError{Msg: fmt.Sprintf("%s: %v", n.DataPath, err)}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	clients := make([]*datasets.Set, m)
	for j, idx := range parts {
		clients[j] = train.Subset(idx)
	}
	return clients, nil
}

// concat stacks the rows of the clients (the training set of a synthetic
// federation, for tuning).
func concat(sets []*datasets.Set) *datasets.Set {
	out := &datasets.Set{Dim: sets[0].Dim, Classes: sets[0].Classes, Names: sets[0].Names}
	for _, s := range sets {
		out.N += s.N
		out.X = append(out.X, s.X...)
		out.Y = append(out.Y, s.Y...)
	}
	return out
}

// synthetic generates the synthetic FedNewton federation of the scenario
// (seed sc.Seed) and prepares its ridge problem in the seeded random-feature
// space; the generated data are returned too, for the model-heterogeneity
// measure that needs the clients' hidden models.
func synthetic(ctx context.Context, sc experiment.Scenario) (*datasets.NewtonData, *model.Ridge, error) {
	n := cfg(sc).Data
	nd, err := n.synthetic().Generate(sc.Seed)
	if err != nil {
		return nil, nil, &experiment.InputError{Msg: err.Error()}
	}
	rff, err := model.NewRFFContext(ctx, n.Dim, n.RFFDim, n.Bandwidth, sc.Seed)
	if err != nil {
		return nil, nil, err
	}
	r, err := model.NewRidgeContext(ctx, nd.Clients, nd.Test, rff, n.Lambda)
	if err != nil {
		return nil, nil, prepareError(err)
	}
	return nd, r, nil
}

// prepareError wraps a failure of the ridge preparation; a cancellation is
// passed on as it is.
func prepareError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("prepare: %w", err)
}

// loadFiles reads the training file and the test file (or splits off a
// seeded hold-out), decides the task, and scales features to [0,1] on the
// training set when asked. Each file's rows × features, with the ridge
// problem they make, are checked against the memory available before they
// are allocated (checkFile), and again once the classes are known.
func loadFiles(ctx context.Context, sc experiment.Scenario) (train, test *datasets.Set, err error) {
	n := cfg(sc).Data
	train, err = datasets.ReadFileContext(ctx, n.DataPath, datasets.ReadOptions{LabelLast: n.LabelLast,
		Check: fileCheck(ctx, sc, n.DataPath, 0, 0)})
	if err != nil {
		return nil, nil, readError(err)
	}
	if n.TestPath != "" {
		test, err = datasets.ReadFileContext(ctx, n.TestPath, datasets.ReadOptions{LabelLast: n.LabelLast,
			Check: fileCheck(ctx, sc, n.TestPath, train.N, train.Dim)})
		if err != nil {
			return nil, nil, readError(err)
		}
		if test.Dim != train.Dim {
			if !isLIBSVM(n.DataPath) || !isLIBSVM(n.TestPath) {
				return nil, nil, experiment.Errorf("%s has %d features but %s has %d", n.TestPath, test.Dim, n.DataPath, train.Dim)
			}
			d := max(train.Dim, test.Dim) // sparse files may end at different indices
			train.PadTo(d)
			test.PadTo(d)
		}
	} else {
		if train.N < 2 {
			return nil, nil, experiment.Errorf("%s: %d sample(s): too few to hold some out for testing", n.DataPath, train.N)
		}
		train, test = train.Split(n.Holdout, sc.Seed)
	}
	classify := n.Task == "classification" || (n.Task != "regression" && datasets.Categorical(train, test))
	if classify {
		k := datasets.Distinct(datasets.MaxClasses, train, test)
		if k > datasets.MaxClasses {
			return nil, nil, experiment.Errorf("%q: more than %d distinct labels, too many classes (task=classification allows at most %d); set task=regression",
				n.DataPath, datasets.MaxClasses, datasets.MaxClasses)
		}
		if err := checkFile(ctx, sc, strconv.Quote(n.DataPath), train.N, test.N, train.Dim, k); err != nil {
			return nil, nil, err
		}
		datasets.Classify(train, test)
		if train.Classes < 2 {
			return nil, nil, experiment.Errorf("%s: only one class (%s): nothing to classify", n.DataPath, train.Names[0])
		}
	}
	if m := n.Clients; train.N < m {
		return nil, nil, experiment.Errorf("%s: %d training samples cannot be dealt to %d clients", n.DataPath, train.N, m)
	}
	if n.Scale {
		s := datasets.FitScaling(train)
		s.Apply(train)
		s.Apply(test)
	}
	return train, test, nil
}

// readError makes a data file's problem an *InputError (exit status 2);
// a cancellation and a refusal that already is one pass as they are.
func readError(err error) error {
	var ie *experiment.InputError
	if errors.As(err, &ie) || errors.Is(err, context.Canceled) {
		return err
	}
	return &experiment.InputError{Msg: err.Error()}
}

func isLIBSVM(path string) bool {
	return len(path) < 4 || !(path[len(path)-4:] == ".csv" || path[len(path)-4:] == ".CSV")
}

// Facts implements experiment.Family: test MSE (or accuracy, for classes)
// and the distance to KRR are charted. Once the data are ready the summary
// and Params carry the bandwidth σ² and λ (and how each was chosen) and
// FedNewton's contraction factor Υ (docs/papers.md §4.2–4.3), and a Υ ≥ 1 is a
// warning that names its cause (model.Ridge.Diagnose).
func (Family) Facts(sc experiment.Scenario, data any) experiment.Facts {
	p, _ := data.(*Prepared)
	f := experiment.Facts{Summary: summary(cfg(sc), p), Charts: []string{"test_mse", "krr_dist"}}
	if p == nil {
		return f
	}
	if p.Ridge.Classes > 0 {
		f.Charts[0] = "test_acc"
	}
	ups := p.Ridge.Contraction()
	f.Params = []experiment.Param{
		{Name: "bandwidth", Value: p.Bandwidth, How: p.HowBandwidth},
		{Name: "lambda", Value: p.Lambda, How: p.HowLambda},
		{Name: "contraction", Value: roundSig(ups, 6), How: "computed"}, // accurate to 1e-6 (model.Ridge.Contraction)
	}
	f.Notes = append(f.Notes, p.Notes...)
	if ups >= 1 && hasKind(cfg(sc).Racers, KindFedNewton) {
		f.Warnings = append(f.Warnings, "FedNewton will diverge: "+p.Ridge.Diagnose().Sentence())
	}
	return f
}

// roundSig rounds x to n significant digits.
func roundSig(x float64, n int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', n, 64), 64)
	return v
}

// hasKind reports whether a racer of the kind is in the list.
func hasKind(racers []experiment.RacerSpec, kind string) bool {
	for _, r := range racers {
		if r.Kind == kind {
			return true
		}
	}
	return false
}
