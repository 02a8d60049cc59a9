package newton

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// metrics are the per-round metrics of a run (PAPERS.md §4.7, §6).
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
	Note  string // how defaults were resolved, e.g. the tuned bandwidth
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
// data file dealt to the clients, mapped to random features.
func (Family) Prepare(ctx context.Context, sc experiment.Scenario, report func(experiment.Progress)) (any, error) {
	n := cfg(sc).Data
	if n.DataPath == "" {
		_, r, err := synthetic(ctx, sc)
		if err != nil {
			return nil, err
		}
		return &Prepared{Ridge: r}, nil
	}
	train, test, err := loadFiles(ctx, sc)
	if err != nil {
		return nil, err
	}
	m := n.Clients
	var parts [][]int
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
	bw, lambda, note := n.Bandwidth, n.Lambda, ""
	switch {
	case n.Tune:
		bw, lambda, note, err = tune(ctx, sc, train)
		if err != nil {
			return nil, err
		}
	case bw == 0:
		med := train.MedianDistance(sc.Seed)
		bw = med * med
		note = fmt.Sprintf("bandwidth σ²=%.3g from the median pairwise distance %.3g", bw, med)
	}
	rff, err := model.NewRFFContext(ctx, train.Dim, n.RFFDim, bw, sc.Seed)
	if err != nil {
		return nil, err
	}
	r, err := model.NewRidgeContext(ctx, clients, test, rff, lambda)
	if err != nil {
		return nil, prepareError(err)
	}
	return &Prepared{Ridge: r, Note: note}, nil
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

// Grids of the paper's tuning (PAPERS.md §4.6).
var (
	bandwidthGrid = []float64{0.01, 0.1, 1, 10, 100, 1000}
	lambdaGrid    = []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7}
)

// tune grid-searches σ² and λ for centralised KRR on a seeded 20 %
// validation split of the training data (§4.5: "tuned by grid search"),
// maximising accuracy (classification) or minimising MSE.
func tune(ctx context.Context, sc experiment.Scenario, train *datasets.Set) (bw, lambda float64, note string, err error) {
	fit, val := train.Split(0.2, sc.Seed+1)
	best := math.Inf(1)
	for _, b := range bandwidthGrid {
		rff, err := model.NewRFFContext(ctx, train.Dim, cfg(sc).Data.RFFDim, b, sc.Seed)
		if err != nil {
			return 0, 0, "", err
		}
		for _, l := range lambdaGrid {
			r, err := model.NewRidgeContext(ctx, []*datasets.Set{fit}, val, rff, l)
			if ctx.Err() != nil {
				return 0, 0, "", ctx.Err()
			}
			if err != nil {
				continue // not positive definite at this λ: skip
			}
			mse, acc := r.Evaluate(r.KRR, r.NewWork())
			score := mse
			if train.Classes > 0 {
				score = -acc
			}
			if score < best {
				best, bw, lambda = score, b, l
			}
		}
	}
	if math.IsInf(best, 1) {
		return 0, 0, "", experiment.Errorf("tune: no (bandwidth, λ) on the grid gave a usable fit")
	}
	return bw, lambda, fmt.Sprintf("tuned on a validation split: bandwidth σ²=%s, λ=%s",
		experiment.FormatFloat(bw), experiment.FormatFloat(lambda)), nil
}

// Facts implements experiment.Family: test MSE (or accuracy, for classes)
// and the distance to KRR are charted; a data file's resolved bandwidth is
// noted.
func (Family) Facts(sc experiment.Scenario, data any) experiment.Facts {
	f := experiment.Facts{Summary: summary(cfg(sc)), Charts: []string{"test_mse", "krr_dist"}}
	if p, ok := data.(*Prepared); ok {
		if p.Ridge.Classes > 0 {
			f.Charts[0] = "test_acc"
		}
		if p.Note != "" {
			f.Notes = append(f.Notes, p.Note)
		}
	}
	return f
}
