package algorithms

import (
	"math"
	"slices"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// fedmdProblem is a noise-free two-cluster federation with many pool clients
// and anchor points, so that the moments FedMD estimates are close to their
// expectations.
func fedmdProblem(t *testing.T, seed uint64) *model.Mixture {
	t.Helper()
	cfg := datasets.Mixture{Clients: 10, Dim: 6, K: 2, Radius: 2, MinSep: 1.5, Noise: 0, MaxSamples: 300,
		Anchors: 8, AnchorPoints: 4000, PoolClients: 20000}
	fed, err := cfg.Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	return model.NewMixture(fed)
}

// TestFedMDFirstStep checks one FedMD round against the expected-moment
// analysis of docs/papers.md §5.2: from θ = 0 with Σ = I, α = β = 1, A ≈
// (Ûᵀθ*)(Ûᵀθ*)ᵀ so σ̂ ≈ ‖θ*_z‖ and the step η = σ̂/2 along r ≈ θ*_z/‖θ*_z‖
// lands each anchor near θ*_z/2. Without the sign rule of §8 about half the
// anchors would step away from their truth.
func TestFedMDFirstStep(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		p := fedmdProblem(t, seed)
		f := FedMD{Rounds: 1, Pool: 20000, Pairs: 2000, OIIters: 40, PowerIters: 30, Epsilon: 0.1, Alpha: 1, Beta: 1,
			Delta: p.Fed.Delta, Seed: seed}
		if err := f.validate(p); err != nil {
			t.Fatal(err)
		}
		st := newFedMD(f, p)
		st.round()
		for h, th := range st.anchors {
			truth := p.Fed.Truths[p.Fed.AnchorLabels[h]]
			half := make([]float64, len(truth))
			for a := range half {
				half[a] = truth[a] / 2
			}
			if e := model.Distance(th, half); e > 0.1*model.Norm(truth) {
				t.Errorf("seed %d anchor %d: ‖θ_1 − θ*/2‖ = %.3f, want < 10%% of ‖θ*‖ = %.3f", seed, h, e, model.Norm(truth))
			}
		}
	}
}

// TestFedMDFreezesBelowEpsilonDelta checks the stopping rule with the
// else-branch of §7 corrected: when εΔ exceeds every σ̂, no anchor moves.
func TestFedMDFreezesBelowEpsilonDelta(t *testing.T) {
	p := fedmdProblem(t, 4)
	f := FedMD{Rounds: 2, Pool: 5000, Pairs: 200, OIIters: 10, PowerIters: 10, Epsilon: 0.2, Alpha: 1, Beta: 1,
		Delta: 100, Seed: 4} // εΔ = 20 ≫ ‖θ*‖ = 2
	st := newFedMD(f, p)
	st.round()
	st.round()
	for h, th := range st.anchors {
		if model.Norm(th) != 0 {
			t.Fatalf("anchor %d moved to %v although σ̂ ≤ εΔ", h, th)
		}
	}
}

// TestFedMDConverges checks that with noise-free data every anchor ends
// within εΔ-scale of its truth after T rounds (docs/papers.md §5.2, Thm 1: the
// error contracts each round until σ̂ ≤ εΔ; here the bound is 2εΔ/α).
func TestFedMDConverges(t *testing.T) {
	p := fedmdProblem(t, 5)
	f := FedMD{Rounds: 8, Pool: 2500, Pairs: 250, OIIters: 30, PowerIters: 20, Epsilon: 0.1, Alpha: 1, Beta: 1,
		Delta: p.Fed.Delta, Seed: 5}
	if err := f.validate(p); err != nil {
		t.Fatal(err)
	}
	st := newFedMD(f, p)
	for range f.Rounds {
		st.round()
	}
	for h, th := range st.anchors {
		if e := model.Distance(th, p.Fed.Truths[p.Fed.AnchorLabels[h]]); e > 2*f.Epsilon*f.Delta {
			t.Errorf("anchor %d ends %.3f from its truth, want ≤ 2εΔ = %.3f", h, e, 2*f.Epsilon*f.Delta)
		}
	}
}

// TestFedMDNeedsData checks that Phase 1 refuses a federation without the
// fresh data it needs (m·T pool clients, 2·l·T points per anchor).
func TestFedMDNeedsData(t *testing.T) {
	p := fedmdProblem(t, 1) // 20000 pool clients, 4000 points per anchor
	for _, f := range []FedMD{
		{Rounds: 3, Pool: 7000, Pairs: 10},
		{Rounds: 3, Pool: 100, Pairs: 700},
	} {
		f.OIIters, f.PowerIters, f.Epsilon, f.Alpha, f.Beta, f.Delta = 2, 1, 0.1, 1, 1, 1
		if err := f.validate(p); err == nil {
			t.Errorf("%+v accepted", f)
		}
		f.Reuse = true
		if err := f.validate(p); err != nil {
			t.Errorf("reuse mode: %v", err)
		}
	}
}

// TestClusterAnchors checks the anchor clustering rule of docs/papers.md §8 on
// hand-made configurations whose answer is known, and that GroupAnchors
// reports what happened: the components of the Δ/2 graph, the anchors
// dropped beyond the k largest, and the k-means fallback.
func TestClusterAnchors(t *testing.T) {
	pt := func(x, y float64) []float64 { return []float64{x, y} }
	sortCentres := func(c []float64) [][]float64 {
		var out [][]float64
		for j := 0; j < len(c)/2; j++ {
			out = append(out, []float64{math.Round(c[2*j]*1e9) / 1e9, math.Round(c[2*j+1]*1e9) / 1e9})
		}
		slices.SortFunc(out, func(a, b []float64) int {
			if a[0] != b[0] {
				return int(math.Copysign(1, a[0]-b[0]))
			}
			return int(math.Copysign(1, a[1]-b[1]))
		})
		return out
	}
	for _, test := range []struct {
		name    string
		anchors [][]float64
		k       int
		delta   float64
		want    [][]float64
		groups  AnchorGroups
	}{
		{"three tight groups", [][]float64{pt(0, 0), pt(0.2, 0), pt(10, 0), pt(10, 0.4), pt(0, 10), pt(0.1, 10), pt(0, 10.2)},
			3, 4, [][]float64{{0.1 / 3, 30.2 / 3}, {0.1, 0}, {10, 0.2}}, AnchorGroups{Anchors: 7, Components: 3}},
		// Four components for k = 3: the singleton (5, 5) is dropped.
		{"too many components", [][]float64{pt(0, 0), pt(0, 0.2), pt(5, 5), pt(10, 0), pt(10, 0.2), pt(0, 10), pt(0, 10.2)},
			3, 4, [][]float64{{0, 0.1}, {0, 10.1}, {10, 0.1}}, AnchorGroups{Anchors: 7, Components: 4, Dropped: 1}},
		// Two groups closer than Δ/2 merge into one component; k-means splits
		// them again.
		{"too few components", [][]float64{pt(0, 0), pt(0, 0.1), pt(1, 0), pt(1, 0.1), pt(20, 0), pt(20, 0.2)},
			3, 4, [][]float64{{0, 0.05}, {1, 0.05}, {20, 0.1}}, AnchorGroups{Anchors: 6, Components: 2, KMeans: true}},
	} {
		centres, groups := GroupAnchors(test.anchors, test.k, test.delta)
		if groups != test.groups {
			t.Errorf("%s: groups %+v, want %+v", test.name, groups, test.groups)
		}
		if !slices.Equal(centres, ClusterAnchors(test.anchors, test.k, test.delta)) {
			t.Errorf("%s: GroupAnchors and ClusterAnchors disagree", test.name)
		}
		got := sortCentres(centres)
		for j := range test.want {
			if math.Abs(got[j][0]-test.want[j][0]) > 1e-9 || math.Abs(got[j][1]-test.want[j][1]) > 1e-9 {
				t.Errorf("%s: centres %v, want %v", test.name, got, test.want)
				break
			}
		}
	}
}
