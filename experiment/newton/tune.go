package newton

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/internal/parallel"
	"github.com/fedscope/fedscope/model"
)

// Grids of the paper's tuning (docs/papers.md §4.6): σ² ∈ {0.01, …, 1000} and
// λ ∈ {1e-1, …, 1e-7}. The σ² grid is symmetric under σ² ↦ 1/σ², so it is
// the same whichever way Table 2's σ² column is read (see newtonBandwidth).
var (
	bandwidthGrid = []float64{0.01, 0.1, 1, 10, 100, 1000}
	lambdaGrid    = []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7}
)

// tuneHoldout is the validation fraction of the training rows.
const tuneHoldout = 0.2

// tuneContractionTol is the accuracy of the Υ tuning checks (it only has
// to tell a side of 1).
const tuneContractionTol = 1e-4

// Tuning is what tune tried and chose.
//
// The rule. docs/papers.md §4.6 says only "tuned by grid search"; the paper tunes
// for a comparison of federated methods, and a setting at which FedNewton
// diverges makes that comparison meaningless. So: score every (σ², λ) of
// the grid by centralised KRR on a seeded 20 % validation split of the
// training rows (accuracy for classes, MSE otherwise), and take the
// best-scoring setting whose FedNewton contraction factor Υ (on the run's
// own federation: the training rows dealt to its clients, features at that
// σ²) is below 1; ties go to the larger λ. Only when no setting of the grid
// has Υ < 1 is the best score taken, with a warning that FedNewton will
// diverge. In particular the choice keeps Υ < 1 whenever a setting with
// Υ < 1 is within noise of the best; when it is not, the note says how far
// the choice is from the best score, in standard errors of that score
// (√(a(1−a)/n_val) for an accuracy a, sd(squared errors)/√n_val for an MSE).
//
// Υ is checked in order of score, and a setting is skipped (counted as
// Υ ≥ 1) when a larger λ at the same σ² already has Υ ≥ 1: more ridge
// damps every term of Υ (docs/papers.md §4.3), and over the grids of this
// preset Υ was found to fall monotonically with λ.
type Tuning struct {
	Bandwidth, Lambda float64 // the choice
	Upsilon           float64 // its Υ
	Score             float64 // its validation score (accuracy or MSE)
	Classify          bool    // scores are accuracies (higher is better)
	// The best-scoring setting, its score's standard error and its Υ (a
	// lower bound when ≥ 1: the check stops there).
	BestBandwidth, BestLambda, Best, Noise, BestUpsilon float64
	Checked                                             int // settings whose Υ was computed
	Points                                              []TunePoint
}

// TunePoint is one setting of the grid and its validation score.
type TunePoint struct {
	Bandwidth, Lambda float64
	Score, SE         float64
	// Upsilon is NaN unless checked, +Inf when skipped or not positive
	// definite, and a lower bound ≥ 1 when the check stopped at 1.
	Upsilon float64
}

// better reports whether score a beats b.
func (t *Tuning) better(a, b float64) bool {
	if t.Classify {
		return a > b
	}
	return a < b
}

// Note is the sentence the views show about the choice.
func (t *Tuning) Note() string {
	unit := func(v float64) string {
		if t.Classify {
			return fmt.Sprintf("accuracy %.2f %%", 100*v)
		}
		return fmt.Sprintf("MSE %.4g", v)
	}
	s := fmt.Sprintf("tuned on a %d %% validation split: σ²=%s, λ=%s (KRR validation %s, Υ=%.3g)", int(100*tuneHoldout),
		experiment.FormatFloat(t.Bandwidth), experiment.FormatFloat(t.Lambda), unit(t.Score), t.Upsilon)
	switch {
	case t.Upsilon >= 1:
		s += fmt.Sprintf(": no setting of the grid keeps FedNewton's Υ below 1 (%d checked), so the best score was taken and FedNewton will diverge", t.Checked)
	case t.Bandwidth == t.BestBandwidth && t.Lambda == t.BestLambda:
		s += ": the best score of the grid"
	default:
		gap := math.Abs(t.Best-t.Score) / t.Noise
		within := "within one standard error: within noise"
		if gap > 1 {
			within = fmt.Sprintf("%.1f standard errors of the best score: KRR alone would gain that much where FedNewton cannot run", gap)
		}
		s += fmt.Sprintf(": the best score with Υ < 1; at the best of the grid, %s at σ²=%s, λ=%s, Υ ≥ 1 and FedNewton diverges (the choice is %s)",
			unit(t.Best), experiment.FormatFloat(t.BestBandwidth), experiment.FormatFloat(t.BestLambda), within)
	}
	return s
}

// diverges reports whether a larger λ at bandwidth bw was found to have
// Υ ≥ 1 (then so does λ; see Tuning).
func diverges(points []TunePoint, bw, lambda float64) bool {
	for _, p := range points {
		if p.Bandwidth == bw && p.Lambda > lambda && p.Upsilon >= 1 {
			return true
		}
	}
	return false
}

// tune chooses the bandwidth σ² and λ by the rule of Tuning, and returns
// the statistics of the run's federation at the chosen σ² (test features
// included), ready for Finish(λ).
//
// Work: per σ² the random features of the training rows and the Gram
// matrix of the fitting part are built once (model.RidgeStats) and each λ
// costs one Cholesky factorisation; the σ² values run in parallel on all
// cores. The Υ checks need the federation's local statistics at a σ²,
// built only for the σ² of a candidate (at most two kept at a time).
func tune(ctx context.Context, n Data, seed uint64, train *datasets.Set, clients []*datasets.Set, test *datasets.Set,
	report func(experiment.Progress)) (*Tuning, *model.RidgeStats, error) {
	t := &Tuning{Classify: train.Classes > 0, BestUpsilon: math.NaN(), Upsilon: math.NaN()}
	rff := func(bw float64) *model.RFF { return model.NewRFF(train.Dim, n.RFFDim, bw, seed) }
	progress := func(stage string, d, tot int) {
		if report != nil {
			report(experiment.Progress{Stage: stage, Done: d, Total: tot})
		}
	}
	if err := t.score(ctx, train, seed, rff, progress); err != nil {
		return nil, nil, err
	}
	best := t.best()
	if best < 0 {
		return nil, nil, experiment.Errorf("tune: no (bandwidth, λ) on the grid gave a usable fit of %s", n.DataPath)
	}
	b := t.Points[best]
	t.BestBandwidth, t.BestLambda, t.Best, t.Noise = b.Bandwidth, b.Lambda, b.Score, b.SE
	stats := &federationStats{clients: clients, rff: rff}
	chosen, err := t.check(ctx, stats, progress)
	if err != nil {
		return nil, nil, err
	}
	t.BestUpsilon = t.Points[best].Upsilon
	if chosen < 0 {
		chosen = best
	}
	c := t.Points[chosen]
	t.Bandwidth, t.Lambda, t.Upsilon, t.Score = c.Bandwidth, c.Lambda, c.Upsilon, c.Score
	st, err := stats.at(c.Bandwidth)
	if err == nil {
		err = st.SetTest(test)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tune: %w", err)
	}
	return t, st, nil
}

// score fills t.Points with the validation score of every (σ², λ) of the
// grid: KRR fitted on a seeded split of the training rows and scored on the
// rest. The σ² values run in parallel; each builds its features and Gram
// matrix once, and each λ costs one Cholesky factorisation.
func (t *Tuning) score(ctx context.Context, train *datasets.Set, seed uint64, rff func(float64) *model.RFF,
	progress func(string, int, int)) error {
	fit, val := train.Split(tuneHoldout, seed+1)
	var mu sync.Mutex
	done, total := 0, len(bandwidthGrid)
	progress("tuning σ² and λ", 0, total)
	points := make([][]TunePoint, len(bandwidthGrid))
	parallel.For(len(bandwidthGrid), func(i int) {
		if ctx.Err() != nil {
			return
		}
		bw := bandwidthGrid[i]
		stats, err := model.NewRidgeStats([]*datasets.Set{fit}, val, rff(bw))
		for _, l := range lambdaGrid {
			pt := TunePoint{Bandwidth: bw, Lambda: l, Score: math.NaN(), SE: math.NaN(), Upsilon: math.NaN()}
			if err == nil && ctx.Err() == nil {
				if r, err := stats.At(l); err == nil { // not positive definite at this λ: no score
					s := r.Score(r.KRR, r.NewWork())
					pt.Score, pt.SE = s.MSE, s.MSESE
					if t.Classify {
						pt.Score, pt.SE = s.Acc, s.AccSE
					}
				}
			}
			points[i] = append(points[i], pt)
		}
		mu.Lock()
		done++
		progress("tuning σ² and λ", done, total)
		mu.Unlock()
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, ps := range points {
		t.Points = append(t.Points, ps...)
	}
	return nil
}

// best returns the index of the best score, among equal scores the largest
// λ; −1 when no setting has a score.
func (t *Tuning) best() int {
	best := -1
	for k, pt := range t.Points {
		if math.IsNaN(pt.Score) {
			continue
		}
		if best < 0 || t.better(pt.Score, t.Points[best].Score) ||
			(pt.Score == t.Points[best].Score && pt.Lambda > t.Points[best].Lambda) {
			best = k
		}
	}
	return best
}

// order lists the scored settings best first, ties to the larger λ (more
// contraction), then in grid order.
func (t *Tuning) order() []int {
	order := make([]int, 0, len(t.Points))
	for k, pt := range t.Points {
		if !math.IsNaN(pt.Score) {
			order = append(order, k)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		px, py := t.Points[x], t.Points[y]
		switch {
		case px.Score != py.Score && t.better(px.Score, py.Score):
			return -1
		case px.Score != py.Score:
			return 1
		}
		return -cmp.Compare(px.Lambda, py.Lambda)
	})
	return order
}

// check walks the settings in order of score, computing FedNewton's Υ on
// the run's federation, and returns the first with Υ < 1, or −1.
func (t *Tuning) check(ctx context.Context, stats *federationStats, progress func(string, int, int)) (int, error) {
	order := t.order()
	for i, k := range order {
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		pt := &t.Points[k]
		if diverges(t.Points, pt.Bandwidth, pt.Lambda) {
			pt.Upsilon = math.Inf(1)
			continue
		}
		progress("checking FedNewton's Υ in order of score", i, len(order))
		s, err := stats.at(pt.Bandwidth)
		if err != nil {
			return -1, fmt.Errorf("tune: %w", err)
		}
		if pt.Upsilon, err = s.ContractionAt(pt.Lambda, tuneContractionTol, 1); err != nil {
			pt.Upsilon = math.Inf(1) // a local Hessian is not positive definite at this λ
		}
		t.Checked++
		if pt.Upsilon < 1 {
			return k, nil
		}
	}
	return -1, nil
}

// federationStats builds the statistics of the run's federation at a
// bandwidth when first needed, keeping the last two (each holds every
// client's features or Gram matrix).
type federationStats struct {
	clients []*datasets.Set
	rff     func(float64) *model.RFF
	cache   []bandwidthStats
}

type bandwidthStats struct {
	bw    float64
	stats *model.RidgeStats
}

func (f *federationStats) at(bw float64) (*model.RidgeStats, error) {
	for _, c := range f.cache {
		if c.bw == bw {
			return c.stats, nil
		}
	}
	s, err := model.NewRidgeStats(f.clients, nil, f.rff(bw))
	if err != nil {
		return nil, err
	}
	if len(f.cache) == 2 {
		f.cache = f.cache[1:]
	}
	f.cache = append(f.cache, bandwidthStats{bw, s})
	return s, nil
}
