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

// undampedMargin is the largest contraction factor Υ tuning accepts for
// the undamped FedNewton. Υ moves with the random-feature draw: on
// pendigits (10 IID clients, M = 2000, five draws per setting, σ² ∈
// {0.1, 1, 10}, λ ∈ {1e-2, …, 1e-5}) the largest Υ of five draws was up to
// 1.09 times the smallest (1.17–1.24 at σ² = 1, λ = 1e-4; 0.38–0.41 at
// σ² = 10, λ = 1e-5). A setting with Υ ≤ 0.85 on the run's draw stays
// below 0.93 on another, with room to spare.
const undampedMargin = 0.85

// Tuning is what tune tried and chose.
//
// The rule. docs/papers.md §4.6 says only "tuned by grid search". Every
// (σ², λ) of the grid is scored by centralised KRR on a seeded 20 %
// validation split of the training rows (accuracy for classes, MSE
// otherwise), and the best score is the choice (ties to the larger λ): the
// setting of KRR, DKRR, FedAvg, FedProx and the damped FedNewton, which
// converges at every λ (model.DampedRate), so nothing but validation
// decides for them. The paper's undamped FedNewton diverges when its
// contraction factor Υ exceeds 1 — Table 3's own pendigits setting has
// Υ ≈ 1.2 — so, when it races, it runs at the best-scoring setting whose
// Υ on the run's federation is at most undampedMargin (Υ moves with the
// random-feature draw); when that is not the validation best, it runs on a
// problem of its own. Only when no setting of the grid has Υ within the
// margin does it run at the validation best, with a warning that it will
// diverge. The note says how many standard errors of the best score its
// setting gives up (√(a(1−a)/n_val) for an accuracy a, sd(squared
// errors)/√n_val for an MSE).
//
// Υ is checked in order of score, and a setting is skipped (counted as
// Υ above the margin) when a larger λ at the same σ² already is: more
// ridge damps every term of Υ (docs/papers.md §4.3), and over the grids of
// this preset Υ was found to fall monotonically with λ.
type Tuning struct {
	Bandwidth, Lambda float64 // the validation-best setting: every racer's but the undamped FedNewton's
	Score             float64 // its validation score (accuracy or MSE)
	Noise             float64 // its score's standard error
	Classify          bool    // scores are accuracies (higher is better)
	// The undamped FedNewton's setting (Checked > 0 only when it races):
	// the best score with Υ ≤ undampedMargin, or the validation best when
	// none has; its score and its Υ (a lower bound when above the margin:
	// the check stops there).
	NewtonBandwidth, NewtonLambda, NewtonScore, NewtonUpsilon float64
	Newton                                                    bool // the undamped FedNewton races
	Checked                                                   int  // settings whose Υ was computed
	Points                                                    []TunePoint
}

// TunePoint is one setting of the grid and its validation score.
type TunePoint struct {
	Bandwidth, Lambda float64
	Score, SE         float64
	// Upsilon is NaN unless checked, +Inf when skipped or not positive
	// definite, and a lower bound when the check stopped at the margin.
	Upsilon float64
}

// better reports whether score a beats b.
func (t *Tuning) better(a, b float64) bool {
	if t.Classify {
		return a > b
	}
	return a < b
}

// Separate reports whether the undamped FedNewton runs at a setting of its
// own.
func (t *Tuning) Separate() bool {
	return t.Newton && (t.NewtonBandwidth != t.Bandwidth || t.NewtonLambda != t.Lambda)
}

// Note is the sentence the views show about the choice.
func (t *Tuning) Note() string {
	unit := func(v float64) string {
		if t.Classify {
			return fmt.Sprintf("accuracy %.2f %%", 100*v)
		}
		return fmt.Sprintf("MSE %.4g", v)
	}
	s := fmt.Sprintf("tuned on a %d %% validation split: σ²=%s, λ=%s, the best KRR validation %s", int(100*tuneHoldout),
		experiment.FormatFloat(t.Bandwidth), experiment.FormatFloat(t.Lambda), unit(t.Score))
	switch {
	case !t.Newton:
		return s
	case t.NewtonUpsilon > undampedMargin:
		return s + fmt.Sprintf("; no setting of the grid keeps FedNewton's Υ ≤ %g (%d checked), so the undamped FedNewton runs there too and will diverge",
			undampedMargin, t.Checked)
	case !t.Separate():
		return s + fmt.Sprintf("; FedNewton's Υ there is %.3g ≤ %g, so the undamped FedNewton runs there too", t.NewtonUpsilon, undampedMargin)
	}
	gap := math.Abs(t.Score-t.NewtonScore) / t.Noise
	within := "within one standard error of the best"
	if gap > 1 {
		within = fmt.Sprintf("%.1f standard errors below the best", gap)
	}
	return s + fmt.Sprintf("; the undamped FedNewton runs at σ²=%s, λ=%s (validation %s, %s), the best score with Υ = %.3g ≤ %g "+
		"(at the best, Υ > %g; Υ moves by up to 9 %% between random-feature draws)", experiment.FormatFloat(t.NewtonBandwidth),
		experiment.FormatFloat(t.NewtonLambda), unit(t.NewtonScore), within, t.NewtonUpsilon, undampedMargin, undampedMargin)
}

// diverges reports whether a larger λ at bandwidth bw was found to have
// Υ above the margin (then so does λ; see Tuning).
func diverges(points []TunePoint, bw, lambda float64) bool {
	for _, p := range points {
		if p.Bandwidth == bw && p.Lambda > lambda && p.Upsilon > undampedMargin {
			return true
		}
	}
	return false
}

// tune chooses the bandwidth σ² and λ by the rule of Tuning, and returns
// the statistics of the run's federation at the chosen σ² (test features
// included), ready for Finish(λ), and, when the undamped FedNewton
// (newton: it races) runs at a σ² of its own, the statistics at that σ²
// too (nil otherwise: it shares the first).
//
// Work: per σ² the random features of the training rows and the Gram
// matrix of the fitting part are built once (model.RidgeStats) and each λ
// costs one Cholesky factorisation; the σ² values run in parallel on all
// cores. The Υ checks need the federation's local statistics at a σ²,
// built only for the σ² of a candidate (at most two kept at a time).
func tune(ctx context.Context, n Data, seed uint64, train *datasets.Set, clients []*datasets.Set, test *datasets.Set,
	newton bool, report func(experiment.Progress)) (*Tuning, *model.RidgeStats, *model.RidgeStats, error) {
	t := &Tuning{Classify: train.Classes > 0, Newton: newton, NewtonUpsilon: math.NaN()}
	rff := func(bw float64) *model.RFF { return model.NewRFF(train.Dim, n.RFFDim, bw, seed) }
	progress := func(stage string, d, tot int) {
		if report != nil {
			report(experiment.Progress{Stage: stage, Done: d, Total: tot})
		}
	}
	if err := t.score(ctx, train, seed, rff, progress); err != nil {
		return nil, nil, nil, err
	}
	best := t.best()
	if best < 0 {
		return nil, nil, nil, experiment.Errorf("tune: no (bandwidth, λ) on the grid gave a usable fit of %s", n.DataPath)
	}
	b := t.Points[best]
	t.Bandwidth, t.Lambda, t.Score, t.Noise = b.Bandwidth, b.Lambda, b.Score, b.SE
	stats := &federationStats{clients: clients, rff: rff}
	chosen := best
	if newton {
		k, err := t.check(ctx, stats, progress)
		if err != nil {
			return nil, nil, nil, err
		}
		if k >= 0 {
			chosen = k
		}
		c := t.Points[chosen]
		t.NewtonBandwidth, t.NewtonLambda, t.NewtonScore, t.NewtonUpsilon = c.Bandwidth, c.Lambda, c.Score, c.Upsilon
		if k < 0 {
			t.NewtonUpsilon = t.Points[best].Upsilon
		}
	}
	at := func(bw float64) (*model.RidgeStats, error) {
		st, err := stats.at(bw)
		if err == nil {
			err = st.SetTest(test)
		}
		if err != nil {
			return nil, fmt.Errorf("tune: %w", err)
		}
		return st, nil
	}
	st, err := at(t.Bandwidth)
	if err != nil || !t.Separate() || t.NewtonBandwidth == t.Bandwidth {
		return t, st, nil, err
	}
	st2, err := at(t.NewtonBandwidth)
	return t, st, st2, err
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
// the run's federation, and returns the first with Υ ≤ undampedMargin, or
// −1.
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
		if pt.Upsilon, err = s.ContractionAt(pt.Lambda, tuneContractionTol, undampedMargin); err != nil {
			pt.Upsilon = math.Inf(1) // a local Hessian is not positive definite at this λ
		}
		t.Checked++
		if pt.Upsilon < undampedMargin {
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
