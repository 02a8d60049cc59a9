package algorithms_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"gonum.org/v1/gonum/mat"
)

// randomOrthonormal returns a d×d orthogonal matrix from gonum's QR of a
// Gaussian matrix (independent of the package's Gram–Schmidt).
func randomOrthonormal(rng *rand.Rand, d int) *mat.Dense {
	g := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// sinLargestAngle returns sin of the largest principal angle between the
// column spans of q (d×k, orthonormal) and the first k columns of u:
// ‖(I − U_k U_kᵀ) Q‖₂ (gonum SVD).
func sinLargestAngle(q []float64, u *mat.Dense, d, k int) float64 {
	qm := mat.NewDense(d, k, q)
	uk := u.Slice(0, d, 0, k)
	var proj, resid mat.Dense
	proj.Mul(uk.T(), qm)
	resid.Mul(uk, &proj)
	resid.Sub(qm, &resid)
	var svd mat.SVD
	svd.Factorize(&resid, mat.SVDNone)
	return svd.Values(nil)[0]
}

// orthonormalityError returns max |QᵀQ − I|.
func orthonormalityError(q []float64, d, k int) float64 {
	qm := mat.NewDense(d, k, q)
	var g mat.Dense
	g.Mul(qm.T(), qm)
	var e float64
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			e = math.Max(e, math.Abs(g.At(i, j)-want))
		}
	}
	return e
}

// TestFederatedOrthogonalIterationTopK builds a non-symmetric Y = U S Vᵀ with
// known singular vectors, hands it to Algorithm 3 as vector pairs spread over
// three clients of different sizes (docs/papers.md §5.3), and checks that the
// output spans the top-k left singular subspace: every principal angle below
// 1e-8, orthonormal columns. The dense form on the aggregate Y must give the
// same subspace from the same start.
func TestFederatedOrthogonalIterationTopK(t *testing.T) {
	const d, k = 8, 3
	rng := rand.New(rand.NewPCG(7, 8))
	u, v := randomOrthonormal(rng, d), randomOrthonormal(rng, d)
	s := []float64{5, 3, 2, 0.5, 0.3, 0.2, 0.1, 0.05}
	// Pair r: a = √(P s_r) u_r, b = √(P s_r) v_r, so (1/P) Σ a bᵀ = U S Vᵀ.
	// Each pair is also duplicated with opposite sign on b and on a, which
	// cancel in Y but make the clients' messages differ from Y's columns.
	type pair struct{ a, b []float64 }
	var pairs []pair
	for r := 0; r < d; r++ {
		a, b := make([]float64, d), make([]float64, d)
		for i := 0; i < d; i++ {
			a[i], b[i] = u.At(i, r), v.At(i, r)
		}
		pairs = append(pairs, pair{a, b})
		neg := make([]float64, d)
		for i := range neg {
			neg[i] = -a[i]
		}
		pairs = append(pairs, pair{neg, b}, pair{a, b})
	}
	total := len(pairs)
	sizes := []int{10, 7, 7}
	var clients []algorithms.PairClient
	next := 0
	y := make([]float64, d*d)
	for _, n := range sizes {
		c := algorithms.PairClient{N: n, A: make([]float64, n*d), B: make([]float64, n*d)}
		for j := 0; j < n; j++ {
			p := pairs[next]
			r := next / 3
			f := math.Sqrt(float64(total) * s[r])
			for i := 0; i < d; i++ {
				c.A[j*d+i], c.B[j*d+i] = f*p.a[i], f*p.b[i]
			}
			for i := 0; i < d; i++ {
				for l := 0; l < d; l++ {
					y[i*d+l] += c.A[j*d+i] * c.B[j*d+l] / float64(total)
				}
			}
			next++
		}
		clients = append(clients, c)
	}
	q0 := make([]float64, d*k)
	for e := range q0 {
		q0[e] = rng.NormFloat64()
	}
	algorithms.Orthonormalize(q0, d, k)
	// (s_4/s_3)² = 1/16 per effective iteration: 30 iterations reach 1e-36.
	q := algorithms.FederatedOrthogonalIteration(clients, d, k, 60, q0)
	if sin := sinLargestAngle(q, u, d, k); sin > 1e-8 {
		t.Errorf("largest principal angle: sin = %.3g, want < 1e-8", sin)
	}
	if e := orthonormalityError(q, d, k); e > 1e-12 {
		t.Errorf("QᵀQ differs from I by %.3g", e)
	}
	dense := append([]float64(nil), q0...)
	algorithms.OrthogonalIteration(y, d, k, 60, dense, make([]float64, d*k))
	if sin := sinLargestAngle(dense, u, d, k); sin > 1e-8 {
		t.Errorf("dense form: largest principal angle sin = %.3g", sin)
	}
	// Few iterations: not converged, but both forms are the same iteration.
	fq := algorithms.FederatedOrthogonalIteration(clients, d, k, 4, q0)
	dq := append([]float64(nil), q0...)
	algorithms.OrthogonalIteration(y, d, k, 4, dq, make([]float64, d*k))
	for e := range fq {
		if math.Abs(fq[e]-dq[e]) > 1e-10 {
			t.Fatalf("after 4 iterations the federated and dense forms differ at %d: %v vs %v", e, fq[e], dq[e])
		}
	}
	if sin := sinLargestAngle(fq, u, d, k); sin < 1e-6 {
		t.Errorf("4 iterations already converged (sin %.3g): the test would not catch a broken iteration", sin)
	}
}

// TestPowerIteration checks the k = 1 case on A = U S Vᵀ: the vector is the
// leading left singular vector u_1 up to sign, and on a symmetric positive
// definite A the Rayleigh quotient is the top eigenvalue.
func TestPowerIteration(t *testing.T) {
	const k = 4
	rng := rand.New(rand.NewPCG(9, 10))
	u, v := randomOrthonormal(rng, k), randomOrthonormal(rng, k)
	s := []float64{4, 1, 0.5, 0.1}
	a, sym := make([]float64, k*k), make([]float64, k*k)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			for r := 0; r < k; r++ {
				a[i*k+j] += u.At(i, r) * s[r] * v.At(j, r)
				sym[i*k+j] += u.At(i, r) * s[r] * u.At(j, r)
			}
		}
	}
	x := []float64{0.5, 0.5, 0.5, 0.5}
	algorithms.PowerIteration(a, k, 40, x, make([]float64, k))
	var dot float64
	for i := 0; i < k; i++ {
		dot += x[i] * u.At(i, 0)
	}
	if math.Abs(math.Abs(dot)-1) > 1e-12 {
		t.Errorf("|⟨v, u_1⟩| = %v, want 1", math.Abs(dot))
	}
	x = []float64{0.5, 0.5, 0.5, 0.5}
	if rq := algorithms.PowerIteration(sym, k, 40, x, make([]float64, k)); math.Abs(rq-4) > 1e-12 {
		t.Errorf("Rayleigh quotient %v, want the top eigenvalue 4", rq)
	}
	zero := make([]float64, k*k)
	if rq := algorithms.PowerIteration(zero, k, 5, x, make([]float64, k)); rq != 0 {
		t.Errorf("A = 0: Rayleigh quotient %v, want 0", rq)
	}
}

// TestOrthonormalizeRankDeficient checks that dependent or zero columns
// still give orthonormal columns spanning the independent ones.
func TestOrthonormalizeRankDeficient(t *testing.T) {
	const d, k = 5, 3
	q := []float64{ // columns: e_0 + e_1, 2(e_0 + e_1), 0
		1, 2, 0,
		1, 2, 0,
		0, 0, 0,
		0, 0, 0,
		0, 0, 0,
	}
	algorithms.Orthonormalize(q, d, k)
	if e := orthonormalityError(q, d, k); e > 1e-12 {
		t.Fatalf("QᵀQ differs from I by %.3g: %v", e, q)
	}
	if math.Abs(q[0]-1/math.Sqrt2) > 1e-15 || math.Abs(q[k]-1/math.Sqrt2) > 1e-15 {
		t.Fatalf("first column %v, want (e_0 + e_1)/√2", []float64{q[0], q[k], q[2*k]})
	}
}
