package newton

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// DataKey implements experiment.Computation: the data configuration, the
// seed and the data files' size and modification time.
func (compute) DataKey(sc experiment.Scenario, c Config) string {
	d := c.Data
	key := fmt.Sprintf("%#v|%d|%s", d, sc.Seed, fileStamp(d.DataPath, d.TestPath))
	if d.Tune && undamped(c.Racers) { // tuning then chooses FedNewton's setting too
		key += "|undamped"
	}
	return key
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

// Prepare implements experiment.Computation: the synthetic federation, or
// the data file dealt to the clients, mapped to random features; with
// tune=true the bandwidth and λ are first chosen on a validation split
// (tune).
func (compute) Prepare(ctx context.Context, sc experiment.Scenario, c Config, report func(experiment.Progress)) (*Prepared, error) {
	clients, train, test, err := federation(ctx, sc, c)
	if err != nil {
		return nil, err
	}
	p, stats, newtonStats, err := chooseSetting(ctx, sc, c, train, clients, test, report)
	if err != nil {
		return nil, err
	}
	if stats == nil {
		if stats, err = featureStats(ctx, sc, c.Data, clients, test, p.Bandwidth, report); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t := p.Tuning; t != nil && t.Separate() {
		if p.Undamped, err = undampedProblem(t, stats, newtonStats); err != nil {
			return nil, err
		}
	}
	r, err := stats.Finish(p.Lambda)
	if err != nil {
		return nil, experiment.Errorf("lambda=%s: %v (bandwidth σ²=%s)", experiment.FormatFloat(p.Lambda), err, experiment.FormatFloat(p.Bandwidth))
	}
	p.Ridge = r
	return p, nil
}

// federation is the clients' data and the test set: drawn from the
// synthetic model, or read from the files and dealt out. train, the pooled
// training data, is set only where tuning or the median heuristic needs it.
func federation(ctx context.Context, sc experiment.Scenario, c Config) (clients []*datasets.Set, train, test *datasets.Set, err error) {
	n := c.Data
	if n.DataPath == "" {
		nd, err := n.synthetic().Generate(sc.Seed)
		if err != nil {
			return nil, nil, nil, &experiment.InputError{Msg: err.Error()}
		}
		clients, test = nd.Clients, nd.Test
		if n.Tune {
			train = datasets.Concat(clients)
		}
		return clients, train, test, nil
	}
	if train, test, err = loadFiles(ctx, c, sc.Seed); err != nil {
		return nil, nil, nil, err
	}
	if clients, err = partition(ctx, n, sc.Seed, train); err != nil {
		return nil, nil, nil, err
	}
	return clients, train, test, nil
}

// chooseSetting fixes the bandwidth and λ: given, tuned on a validation
// split (which also leaves the statistics of the chosen problems), or the
// bandwidth by the median heuristic.
func chooseSetting(ctx context.Context, sc experiment.Scenario, c Config, train *datasets.Set, clients []*datasets.Set, test *datasets.Set,
	report func(experiment.Progress)) (p *Prepared, stats, newtonStats *model.RidgeStats, err error) {
	n := c.Data
	p = &Prepared{Bandwidth: n.Bandwidth, Lambda: n.Lambda, HowBandwidth: "given", HowLambda: "given"}
	switch {
	case n.Tune:
		tu, st, st2, err := tune(ctx, n, sc.Seed, train, clients, test, undamped(c.Racers), report)
		if err != nil {
			return nil, nil, nil, err
		}
		p.Tuning, stats, newtonStats = tu, st, st2
		p.Bandwidth, p.Lambda, p.HowBandwidth, p.HowLambda = tu.Bandwidth, tu.Lambda, "tuned", "tuned"
		p.Notes = append(p.Notes, tu.Note())
	case p.Bandwidth == 0:
		med := train.MedianDistance(sc.Seed)
		p.Bandwidth, p.HowBandwidth = med*med, "median heuristic"
		p.Notes = append(p.Notes, fmt.Sprintf("bandwidth σ²=%.3g from the median pairwise distance %.3g", p.Bandwidth, med))
	}
	return p, stats, newtonStats, nil
}

// featureStats maps the clients' data to random features of the given
// bandwidth and gathers the ridge statistics every λ is solved from.
func featureStats(ctx context.Context, sc experiment.Scenario, n Data, clients []*datasets.Set, test *datasets.Set, bandwidth float64,
	report func(experiment.Progress)) (*model.RidgeStats, error) {
	if report != nil {
		report(experiment.Progress{Stage: "random features"})
	}
	rff, err := model.NewRFFContext(ctx, clients[0].Dim, n.RFFDim, bandwidth, sc.Seed)
	if err != nil {
		return nil, err
	}
	stats, err := model.NewRidgeStatsContext(ctx, clients, test, rff)
	if err != nil {
		return nil, prepareError(err)
	}
	return stats, nil
}

// undampedProblem is the undamped FedNewton's own problem when tuning chose
// it apart; from the shared statistics (At copies them) when only λ differs.
func undampedProblem(t *Tuning, stats, newtonStats *model.RidgeStats) (*Problem, error) {
	from, finish := newtonStats, true
	if from == nil {
		from, finish = stats, false
	}
	r, err := from.At(t.NewtonLambda)
	if finish {
		r, err = from.Finish(t.NewtonLambda)
	}
	if err != nil {
		return nil, experiment.Errorf("tune: FedNewton's λ=%s: %v", experiment.FormatFloat(t.NewtonLambda), err)
	}
	return &Problem{Ridge: r, Bandwidth: t.NewtonBandwidth, Lambda: t.NewtonLambda}, nil
}

// undamped reports whether the paper's undamped FedNewton is among the
// racers (tuning then checks its Υ).
func undamped(racers []experiment.RacerSpec) bool {
	for _, r := range racers {
		if _, damped := r.Opt("damped"); r.Kind == KindFedNewton && !damped {
			return true
		}
	}
	return false
}

// partition deals a data file's training rows to the clients: IID, by a
// Dirichlet label skew for classes, or Dirichlet sizes for regression.
func partition(ctx context.Context, n Data, seed uint64, train *datasets.Set) ([]*datasets.Set, error) {
	m := n.Clients
	var parts [][]int
	var err error
	switch {
	case n.DirichletC > 0 && train.Classes > 0:
		parts, err = datasets.DirichletLabels(train.Labels(), train.Classes, m, n.DirichletC, n.MinSize, seed)
	case n.DirichletC > 0:
		var sizes []int
		if sizes, err = datasets.DirichletSizes(train.N, m, n.DirichletC, min(10, train.N/m), seed); err == nil {
			parts = datasets.BySizes(train.N, sizes, seed)
		}
	default:
		parts, err = datasets.IID(train.N, m, seed)
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

// synthetic generates the synthetic FedNewton federation of the scenario
// (seed sc.Seed) and prepares its ridge problem in the seeded random-feature
// space; the generated data are returned too, for the model-heterogeneity
// measure that needs the clients' hidden models.
func synthetic(ctx context.Context, n Data, seed uint64) (*datasets.NewtonData, *model.Ridge, error) {
	nd, err := n.synthetic().Generate(seed)
	if err != nil {
		return nil, nil, &experiment.InputError{Msg: err.Error()}
	}
	rff, err := model.NewRFFContext(ctx, n.Dim, n.RFFDim, n.Bandwidth, seed)
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
func loadFiles(ctx context.Context, c Config, seed uint64) (train, test *datasets.Set, err error) {
	n := c.Data
	train, err = datasets.ReadFileContext(ctx, n.DataPath, datasets.ReadOptions{LabelLast: n.LabelLast,
		Check: fileCheck(ctx, c, n.DataPath, 0, 0)})
	if err != nil {
		return nil, nil, readError(err)
	}
	if n.TestPath != "" {
		test, err = datasets.ReadFileContext(ctx, n.TestPath, datasets.ReadOptions{LabelLast: n.LabelLast,
			Check: fileCheck(ctx, c, n.TestPath, train.N, train.Dim)})
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
		train, test = train.Split(n.Holdout, seed)
	}
	classify := n.Task == "classification" || (n.Task != "regression" && datasets.Categorical(train, test))
	if classify {
		k := datasets.Distinct(datasets.MaxClasses, train, test)
		if k > datasets.MaxClasses {
			return nil, nil, experiment.Errorf("%q: more than %d distinct labels, too many classes (task=classification allows at most %d); set task=regression",
				n.DataPath, datasets.MaxClasses, datasets.MaxClasses)
		}
		if err := checkFile(ctx, c, strconv.Quote(n.DataPath), train.N, test.N, train.Dim, k); err != nil {
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
