package model_test

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// smallMixture is a mixture federation small enough to iterate to machine
// precision in a test.
func smallMixture(t *testing.T, seed uint64, delta float64) *model.Mixture {
	t.Helper()
	fed, err := datasets.Mixture{Clients: 60, Dim: 3, K: 2, Radius: 2, MinSep: 1, Delta: delta, Noise: 0.5,
		MaxSamples: 30}.Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	return model.NewMixture(fed)
}

// TestTruthMisclustered recounts, with plain loops, the clients whose
// smallest residual ‖y_i − X_i θ*_j‖² at the true models is not their own
// cluster (ties to the lowest index), as a fraction of the clients and of
// the data.
func TestTruthMisclustered(t *testing.T) {
	for _, delta := range []float64{0, 0.3} {
		m := smallMixture(t, 4, delta)
		d := m.Dim
		var wrong, wrongPts, pts float64
		for i, c := range m.Fed.Clients {
			best, z := math.Inf(1), -1
			for j, th := range m.Fed.Truths {
				var r float64
				for a := 0; a < c.N; a++ {
					e := c.Y[a] - floats.Dot(c.X[a*d:(a+1)*d], th)
					r += e * e
				}
				if r < best {
					best, z = r, j
				}
			}
			pts += float64(c.N)
			if z != m.Fed.Labels[i] {
				wrong++
				wrongPts += float64(c.N)
			}
		}
		clients, data := m.TruthMisclustered()
		if want := wrong / float64(len(m.Fed.Clients)); math.Abs(clients-want) > 1e-15 {
			t.Errorf("Δ=%v: clients %v, want %v", delta, clients, want)
		}
		if want := wrongPts / pts; math.Abs(data-want) > 1e-12 {
			t.Errorf("Δ=%v: data %v, want %v", delta, data, want)
		}
		if delta == 0.3 && !(clients > 0) {
			t.Errorf("Δ=0.3, σ=0.5: no client misclustered at the truth")
		}
	}
}

// TestPhase2AtTruth iterates Phase 2 with the labels held at the truth, one
// cluster at a time, with the raw designs: θ_j ← θ_j + Σ_{i: z_i=j} (n_i/N)
// (u_i − θ_j), u_i = s gradient steps u ← u − (η/n_i)X_iᵀ(X_i u − y_i) from θ_j
// (FedAvg) or the proximal point solved by LU (FedProx) (docs/papers.md §5.4). The
// distance of its limit to the truths (the best of the two matchings of
// k = 2) is Floor. The round map is affine, θ ↦ M_j θ + c_j, so its linear
// part is read off column by column (M_j e_a = map(e_a) − map(0)); the
// largest |eigenvalue| over the clusters is the contraction Rate.
func TestPhase2AtTruth(t *testing.T) {
	m := smallMixture(t, 2, 0)
	d, n := m.Dim, float64(m.N)
	for _, test := range []struct {
		eta  float64
		s    int
		prox bool
	}{
		{eta: 0.1, s: 3},
		{eta: 0.05, s: 1},
		{eta: 0.2, prox: true},
	} {
		local := func(c datasets.Client, theta []float64) []float64 {
			x := mat.NewDense(c.N, d, c.X)
			y := mat.NewVecDense(c.N, c.Y)
			u := mat.NewVecDense(d, append([]float64(nil), theta...))
			if test.prox {
				// (I + (η/n) XᵀX) u = θ + (η/n) Xᵀy.
				var a mat.Dense
				a.Mul(x.T(), x)
				a.Scale(test.eta/float64(c.N), &a)
				for k := 0; k < d; k++ {
					a.Set(k, k, a.At(k, k)+1)
				}
				var rhs mat.VecDense
				rhs.MulVec(x.T(), y)
				rhs.AddScaledVec(u, test.eta/float64(c.N), &rhs)
				var out mat.VecDense
				if err := out.SolveVec(&a, &rhs); err != nil {
					t.Fatal(err)
				}
				return out.RawVector().Data
			}
			for step := 0; step < test.s; step++ {
				var r, g mat.VecDense
				r.MulVec(x, u)
				r.SubVec(&r, y)
				g.MulVec(x.T(), &r)
				u.AddScaledVec(u, -test.eta/float64(c.N), &g)
			}
			return u.RawVector().Data
		}
		limits := make([][]float64, m.K)
		rate := 0.0
		for j := range limits {
			round := func(theta []float64) []float64 {
				next := append([]float64(nil), theta...)
				for i, c := range m.Fed.Clients {
					if m.Fed.Labels[i] != j {
						continue
					}
					u := local(c, theta)
					floats.AddScaled(next, float64(c.N)/n, floats.SubTo(make([]float64, d), u, theta))
				}
				return next
			}
			theta := make([]float64, d)
			for r := 0; r < 20000; r++ {
				next := round(theta)
				move := floats.Distance(next, theta, 2)
				theta = next
				if move < 1e-15 {
					break
				}
			}
			limits[j] = theta
			offset := round(make([]float64, d))
			lin := mat.NewDense(d, d, nil)
			for a := 0; a < d; a++ {
				e := make([]float64, d)
				e[a] = 1
				col := floats.SubTo(make([]float64, d), round(e), offset)
				lin.SetCol(a, col)
			}
			var eig mat.Eigen
			if !eig.Factorize(lin, mat.EigenNone) {
				t.Fatal("eigen decomposition failed")
			}
			for _, v := range eig.Values(nil) {
				rate = math.Max(rate, cmplx.Abs(v))
			}
		}
		tr := m.Fed.Truths
		floor := math.Min(
			math.Max(floats.Distance(limits[0], tr[0], 2), floats.Distance(limits[1], tr[1], 2)),
			math.Max(floats.Distance(limits[1], tr[0], 2), floats.Distance(limits[0], tr[1], 2)))
		got, ok := m.Phase2AtTruth(test.eta, test.s, test.prox)
		if !ok {
			t.Fatalf("%+v: not computed", test)
		}
		if math.Abs(got.Floor-floor) > 1e-9 {
			t.Errorf("%+v: Floor = %v, want %v", test, got.Floor, floor)
		}
		if math.Abs(got.Rate-rate) > 1e-12 {
			t.Errorf("%+v: Rate = %v, measured %v", test, got.Rate, rate)
		}
		if again, _ := m.Phase2AtTruth(test.eta, test.s, test.prox); again != got {
			t.Errorf("%+v: a second call gives %+v, first %+v", test, again, got)
		}
	}
}

// BenchmarkMixtureFacts times what the mixture family's facts add to a run
// at the preset's scale (M = 1000 heavy-tailed clients up to 300 points,
// d = 10, k = 3): the clients' Hessian spectra and Phase 2 at the true
// labels for one local update, and the misclustering at the true models.
func BenchmarkMixtureFacts(b *testing.B) {
	fed, err := datasets.Mixture{Clients: 1000, Dim: 10, K: 3, Radius: 2, MinSep: 1.5, Noise: 0.5, MaxSamples: 300}.Generate(1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m := model.NewMixture(fed)
		m.Phase2AtTruth(0.03, 5, false)
		m.TruthMisclustered()
	}
}
