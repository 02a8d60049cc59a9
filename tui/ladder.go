package tui

import (
	"strconv"

	"github.com/fedscope/fedscope/experiment"
)

// Parameter ladders: the values the step keys move through. Nice round
// values read better on a projector than multiplicative steps.
var (
	etaLadder   = decades([]float64{1, 1.5, 2, 3, 5, 7}, -4, 2)
	stepsLadder = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200}
	gammaLadder = []float64{0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30}
	batchLadder = []float64{1, 2, 5, 10, 20, 25, 50, 100, 250, 500, 1000}
	rLadder     = []float64{1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000}
	alphaLadder = []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1} // PAPERS.md §8, 003
	rankLadder  = []float64{3, 5, 10, 20, 40}                         // PAPERS.md §8, 001
)

// decades expands mantissas over 10^lo … 10^hi.
func decades(mantissas []float64, lo, hi int) []float64 {
	var out []float64
	for e := lo; e <= hi; e++ {
		for _, m := range mantissas {
			// Parse the decimal so that 1.5e-1 is the double nearest 0.15,
			// not 1.5·10⁻¹ rounded twice.
			v, _ := strconv.ParseFloat(strconv.FormatFloat(m, 'g', -1, 64)+"e"+strconv.Itoa(e), 64)
			out = append(out, v)
		}
	}
	return out
}

// stepLadder returns the next value above (up) or below the current one; a
// current value between rungs moves to the nearest rung in that direction.
// At either end it returns the current value.
func stepLadder(ladder []float64, cur float64, up bool) float64 {
	const tol = 1e-9
	if up {
		for _, v := range ladder {
			if v > cur*(1+tol)+tol {
				return v
			}
		}
		return cur
	}
	for i := len(ladder) - 1; i >= 0; i-- {
		if v := ladder[i]; v < cur*(1-tol)-tol {
			return v
		}
	}
	return cur
}

// stepSubspace moves the covariate subspace dimension r along its ladder,
// with r = d (stored as 0, no covariate shift) at the top, and rescales η in
// proportion to r as E000-4 does (PAPERS.md §1.9: η = 0.1·r/d keeps the
// local steps stable as rows scaled by √(d/r) stiffen the local Hessians).
func stepSubspace(sc experiment.Scenario, up bool) experiment.Scenario {
	d := sc.Data.Dim
	cur := sc.Data.SubspaceDim
	if cur == 0 {
		cur = d
	}
	next := int(stepLadder(rLadder, float64(cur), up))
	if next >= d {
		next = d
	}
	if next == cur {
		return sc
	}
	// Round to 12 significant digits so that a round trip 100 → 30 → 100
	// gives back η = 0.1 rather than 0.09999999999999999.
	sc.Eta, _ = strconv.ParseFloat(strconv.FormatFloat(sc.Eta*float64(next)/float64(cur), 'g', 12, 64), 64)
	sc.Data.SubspaceDim = next
	if next == d {
		sc.Data.SubspaceDim = 0
	}
	return sc
}
