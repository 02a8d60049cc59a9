package experiment

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

func datasets_linear(clients, samples, dim int) datasets.Linear {
	return datasets.Linear{Clients: clients, Samples: samples, Dim: dim}
}

// newtonData is the synthetic FedNewton configuration of the scenario.
func (sc Scenario) newtonData() datasets.Newton {
	n := sc.Newton
	return datasets.Newton{Clients: sc.Data.Clients, Samples: sc.Data.Samples, Dim: sc.Data.Dim,
		Alpha: n.Alpha, Beta: n.Beta, NoiseVar: n.NoiseVar, Test: n.TestSize, DirichletC: n.DirichletC}
}

// softLabels is the lowrank data configuration of the scenario.
func (sc Scenario) softLabels() datasets.SoftLabels {
	return datasets.SoftLabels{Clients: sc.Data.Clients, Samples: sc.Data.Samples, Dim: sc.Data.Dim,
		Server: sc.maxRank(), Shift: sc.LowRank.Shift}
}

// familyKey identifies prepared data of the newton and lowrank families.
type familyKey struct {
	family  Family
	data    datasets.Linear
	newton  NewtonConfig
	lowrank LowRankConfig
	seed    uint64
	server  int
	stamp   string // data and test files' size and modification time
}

// Prepared is the data of a newton or lowrank run, shared read-only by its
// racers and re-runs.
type Prepared struct {
	Ridge     *model.Ridge
	Federated *model.Federated
	Note      string // how defaults were resolved, e.g. the tuned bandwidth
}

// preparedCache caches the prepared data of the newton and lowrank
// families (see cache).
var preparedCache = newCache[familyKey, *Prepared](4)

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

// PrepareFamily generates or loads the data of a newton or lowrank scenario
// and prepares its statistics, or returns them from the cache. Bad data
// files give an *InputError naming the file and line.
func PrepareFamily(sc Scenario) (*Prepared, error) {
	key := familyKey{family: sc.Family, data: sc.Data, newton: sc.Newton, lowrank: sc.LowRank, seed: sc.Seed,
		stamp: fileStamp(sc.Newton.DataPath, sc.Newton.TestPath)}
	if sc.Family == FamilyLowRank {
		key.server = sc.maxRank()
	}
	return preparedCache.get(key, func() (*Prepared, error) {
		switch sc.Family {
		case FamilyNewton:
			return prepareNewton(sc)
		case FamilyLowRank:
			return prepareLowRank(sc)
		}
		return nil, fmt.Errorf("experiment: family %q has no prepared data", sc.Family)
	})
}

func prepareLowRank(sc Scenario) (*Prepared, error) {
	d, err := sc.softLabels().Generate(sc.Seed)
	if err != nil {
		return nil, &InputError{Msg: err.Error()}
	}
	loss := model.Logistic{Dim: d.Dim, Mu: sc.LowRank.Mu}
	return &Prepared{Federated: model.NewFederated(loss, d.Dim+1, d.Server, d.Clients, 1)}, nil
}

func prepareNewton(sc Scenario) (*Prepared, error) {
	n := sc.Newton
	if n.DataPath == "" {
		_, r, err := newtonSynthetic(sc)
		if err != nil {
			return nil, err
		}
		return &Prepared{Ridge: r}, nil
	}
	train, test, err := loadFiles(sc)
	if err != nil {
		return nil, err
	}
	m := sc.Data.Clients
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
		return nil, &InputError{Msg: fmt.Sprintf("%s: %v", n.DataPath, err)}
	}
	clients := make([]*datasets.Set, m)
	for j, idx := range parts {
		clients[j] = train.Subset(idx)
	}
	bw, lambda, note := n.Bandwidth, n.Lambda, ""
	switch {
	case n.Tune:
		bw, lambda, note, err = tune(sc, train)
		if err != nil {
			return nil, err
		}
	case bw == 0:
		med := train.MedianDistance(sc.Seed)
		bw = med * med
		note = fmt.Sprintf("bandwidth σ²=%.3g from the median pairwise distance %.3g", bw, med)
	}
	r, err := model.NewRidge(clients, test, model.NewRFF(train.Dim, n.RFFDim, bw, sc.Seed), lambda)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &Prepared{Ridge: r, Note: note}, nil
}

// newtonSynthetic generates the synthetic FedNewton federation of the
// scenario (seed sc.Seed) and prepares its ridge problem in the seeded
// random-feature space; the generated data are returned too, for the
// model-heterogeneity measure that needs the clients' hidden models.
func newtonSynthetic(sc Scenario) (*datasets.NewtonData, *model.Ridge, error) {
	n := sc.Newton
	nd, err := sc.newtonData().Generate(sc.Seed)
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	r, err := model.NewRidge(nd.Clients, nd.Test, model.NewRFF(sc.Data.Dim, n.RFFDim, n.Bandwidth, sc.Seed), n.Lambda)
	if err != nil {
		return nil, nil, fmt.Errorf("prepare: %w", err)
	}
	return nd, r, nil
}

// loadFiles reads the training file and the test file (or splits off a
// seeded hold-out), decides the task, and scales features to [0,1] on the
// training set when asked.
func loadFiles(sc Scenario) (train, test *datasets.Set, err error) {
	n := sc.Newton
	train, err = datasets.ReadFile(n.DataPath, datasets.FormatAuto, n.LabelLast)
	if err != nil {
		return nil, nil, &InputError{Msg: err.Error()}
	}
	if n.TestPath != "" {
		if test, err = datasets.ReadFile(n.TestPath, datasets.FormatAuto, n.LabelLast); err != nil {
			return nil, nil, &InputError{Msg: err.Error()}
		}
		if test.Dim != train.Dim {
			if !isLIBSVM(n.DataPath) || !isLIBSVM(n.TestPath) {
				return nil, nil, &InputError{Msg: fmt.Sprintf("%s has %d features but %s has %d", n.TestPath, test.Dim, n.DataPath, train.Dim)}
			}
			d := max(train.Dim, test.Dim) // sparse files may end at different indices
			train.PadTo(d)
			test.PadTo(d)
		}
	} else {
		if train.N < 2 {
			return nil, nil, &InputError{Msg: fmt.Sprintf("%s: %d sample(s): too few to hold some out for testing", n.DataPath, train.N)}
		}
		train, test = train.Split(n.Holdout, sc.Seed)
	}
	classify := n.Task == "classification" || (n.Task != "regression" && datasets.Categorical(train, test))
	if classify {
		datasets.Classify(train, test)
		if train.Classes < 2 {
			return nil, nil, &InputError{Msg: fmt.Sprintf("%s: only one class (%s): nothing to classify", n.DataPath, train.Names[0])}
		}
	}
	if m := sc.Data.Clients; train.N < m {
		return nil, nil, &InputError{Msg: fmt.Sprintf("%s: %d training samples cannot be dealt to %d clients", n.DataPath, train.N, m)}
	}
	if n.Scale {
		s := datasets.FitScaling(train)
		s.Apply(train)
		s.Apply(test)
	}
	return train, test, nil
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
func tune(sc Scenario, train *datasets.Set) (bw, lambda float64, note string, err error) {
	fit, val := train.Split(0.2, sc.Seed+1)
	best := math.Inf(1)
	for _, b := range bandwidthGrid {
		rff := model.NewRFF(train.Dim, sc.Newton.RFFDim, b, sc.Seed)
		for _, l := range lambdaGrid {
			r, err := model.NewRidge([]*datasets.Set{fit}, val, rff, l)
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
		return 0, 0, "", &InputError{Msg: "tune: no (bandwidth, λ) on the grid gave a usable fit"}
	}
	return bw, lambda, fmt.Sprintf("tuned on a validation split: bandwidth σ²=%s, λ=%s", formatFloat(bw), formatFloat(lambda)), nil
}

// runFamily races a newton or lowrank scenario's algorithms concurrently
// on the same prepared data (the same shape as runLinear).
func runFamily(ctx context.Context, sc Scenario, emit func(Point)) (Result, error) {
	p, err := PrepareFamily(sc)
	if err != nil {
		return Result{}, err
	}
	res := Result{Racers: sc.Resolve(), Prepared: p}
	res.Errs, err = race(ctx, res.Racers, emit, func(r Racer, send func(algorithms.Round)) error {
		switch {
		case r.Ridge != nil && p.Ridge != nil:
			return r.Ridge.Run(ctx, p.Ridge, sc.Rounds, send)
		case r.Federated != nil && p.Federated != nil:
			return r.Federated.Run(ctx, p.Federated, sc.Rounds, send)
		}
		return fmt.Errorf("racer %s does not fit the %s family", r.Label, sc.Family)
	})
	return res, err
}

// Reference prepares the scenario's data (any family) and returns the
// facts the view shows before the first round (for the linear family; none
// for the others) and a note on resolved defaults.
func Reference(sc Scenario) (facts Facts, note string, err error) {
	if sc.Family == FamilyLinear {
		p, err := Prepare(sc)
		if err != nil {
			return NoFacts(), "", err
		}
		return FactsOf(p), "", nil
	}
	p, err := PrepareFamily(sc)
	if err != nil {
		return NoFacts(), "", err
	}
	facts = NoFacts()
	facts.Note = p.Note
	return facts, p.Note, nil
}
