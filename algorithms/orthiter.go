package algorithms

import (
	"math"
)

// PairClient is one client of the federated orthogonal iteration: N local
// vector pairs (a_j, b_j), stored row-wise as N×d matrices (docs/papers.md §5.3).
type PairClient struct {
	N    int
	A, B []float64
}

// FederatedOrthogonalIteration is Algorithm 3 of paper 004 (docs/papers.md §5.3):
// it returns the top-k left singular subspace (d×k, orthonormal columns,
// row-major) of
//
//	Y = (1/Σ_i n_i) Σ_i Σ_j a_ij b_ijᵀ
//
// without forming Y. Starting from q0 (d×k, orthonormal columns), in round t
// every client returns Q_{i,t} = (1/n_i) Σ_j b_ij a_ijᵀ Q_t (t even) or
// (1/n_i) Σ_j a_ij b_ijᵀ Q_t (t odd), and the server averages them with
// weights n_i/Σn, QR-factorising after the odd rounds. After `iters` rounds
// (even) this is iters/2 steps of orthogonal iteration on Y Yᵀ.
func FederatedOrthogonalIteration(clients []PairClient, d, k, iters int, q0 []float64) []float64 {
	if iters < 2 || iters%2 != 0 {
		panic("algorithms: FederatedOrthogonalIteration: iters must be even and ≥ 2")
	}
	if len(q0) != d*k {
		panic("algorithms: FederatedOrthogonalIteration: q0 is not d×k")
	}
	total := 0
	for _, c := range clients {
		total += c.N
	}
	q := append([]float64(nil), q0...)
	next := make([]float64, d*k)
	msg := make([]float64, d*k) // one client's upload, reused
	coef := make([]float64, k)
	for t := 0; t < iters; t++ {
		clear(next)
		for _, c := range clients {
			if c.N == 0 {
				continue
			}
			// Even t: Σ_j b_j (a_jᵀ Q); odd t: Σ_j a_j (b_jᵀ Q).
			left, right := c.B, c.A
			if t%2 == 1 {
				left, right = c.A, c.B
			}
			clear(msg)
			for j := 0; j < c.N; j++ {
				rowTimesTo(coef, right[j*d:(j+1)*d], q, k)
				addOuter(msg, left[j*d:(j+1)*d], coef, 1/float64(c.N))
			}
			w := float64(c.N) / float64(total)
			for e, v := range msg {
				next[e] += w * v
			}
		}
		q, next = next, q
		if t%2 == 1 {
			Orthonormalize(q, d, k)
		}
	}
	return q
}

// OrthogonalIteration runs the same iteration as FederatedOrthogonalIteration
// on an explicit d×d matrix Y (row-major), writing the result into q (d×k,
// used as the start). When Y is the aggregate of the clients' pairs, the
// server's average of the uploads is exactly Yᵀ Q_t or Y Q_t, so both give
// the same subspace; Phase 1 uses this form because forming Y once costs
// m·d² operations against iters·m·d·k for the protocol. scratch needs d·k.
func OrthogonalIteration(y []float64, d, k, iters int, q, scratch []float64) {
	next := scratch[:d*k]
	for t := 0; t < iters; t++ {
		// next = Yᵀ q (t even) or Y q (t odd).
		clear(next)
		for r := 0; r < d; r++ {
			row := y[r*d : (r+1)*d]
			if t%2 == 0 {
				// (Yᵀq)[c] += Y[r][c] q[r]  for all c
				qr := q[r*k : (r+1)*k]
				for c, v := range row {
					if v == 0 {
						continue
					}
					dst := next[c*k : (c+1)*k]
					for a, x := range qr {
						dst[a] += v * x
					}
				}
			} else {
				dst := next[r*k : (r+1)*k]
				for c, v := range row {
					qc := q[c*k : (c+1)*k]
					for a, x := range qc {
						dst[a] += v * x
					}
				}
			}
		}
		copy(q, next)
		if t%2 == 1 {
			Orthonormalize(q, d, k)
		}
	}
}

// PowerIteration is the k = 1 case used by the anchors (docs/papers.md §5.2 step d,
// §5.3): it runs `iters` normalised steps v ← A Aᵀ v on a k×k matrix A
// (row-major) from v (unit k-vector, overwritten) and returns the Rayleigh
// quotient vᵀ A v, the sign-sensitive estimate of the leading singular value
// of A that FedMD uses (docs/papers.md §7: the paper's vᵀ Uᵀ A U v does not
// typecheck; §8). scratch needs k.
func PowerIteration(a []float64, k, iters int, v, scratch []float64) float64 {
	w := scratch[:k]
	for t := 0; t < iters; t++ {
		// w = Aᵀ v, then v = A w.
		for c := 0; c < k; c++ {
			var s float64
			for r := 0; r < k; r++ {
				s += a[r*k+c] * v[r]
			}
			w[c] = s
		}
		var norm float64
		for r := 0; r < k; r++ {
			var s float64
			for c := 0; c < k; c++ {
				s += a[r*k+c] * w[c]
			}
			v[r] = s
			norm += s * s
		}
		if norm == 0 || math.IsNaN(norm) {
			return 0 // A Aᵀ v = 0: nothing to estimate
		}
		norm = math.Sqrt(norm)
		for r := range v[:k] {
			v[r] /= norm
		}
	}
	var rq float64
	for r := 0; r < k; r++ {
		for c := 0; c < k; c++ {
			rq += v[r] * a[r*k+c] * v[c]
		}
	}
	return rq
}

// Orthonormalize replaces the k columns of the d×k row-major matrix q by an
// orthonormal basis of their span, by modified Gram–Schmidt applied twice
// ("twice is enough", Giraud et al. 2005), which is the Q of a thin QR
// factorisation up to column signs. A column that vanishes (rank
// deficiency) is replaced by the first coordinate vector that is not in the
// span of the previous columns, so the result always has orthonormal columns.
func Orthonormalize(q []float64, d, k int) {
	for c := 0; c < k; c++ {
		norm0 := colNorm(q, d, k, c)
		projectOut(q, d, k, c)
		norm := colNorm(q, d, k, c)
		if norm <= 1e-14*math.Max(norm0, 1e-300) || norm == 0 || math.IsNaN(norm) {
			fillOrthogonal(q, d, k, c)
			continue
		}
		for r := 0; r < d; r++ {
			q[r*k+c] /= norm
		}
	}
}

// projectOut removes from column c its components along columns 0..c−1
// (assumed orthonormal), by modified Gram–Schmidt applied twice.
func projectOut(q []float64, d, k, c int) {
	for pass := 0; pass < 2; pass++ {
		for p := 0; p < c; p++ {
			var dot float64
			for r := 0; r < d; r++ {
				dot += q[r*k+p] * q[r*k+c]
			}
			for r := 0; r < d; r++ {
				q[r*k+c] -= dot * q[r*k+p]
			}
		}
	}
}

// fillOrthogonal sets column c to a unit coordinate vector made orthogonal to
// columns 0..c−1, trying e_0, e_1, … in turn.
func fillOrthogonal(q []float64, d, k, c int) {
	for e := 0; e < d; e++ {
		for r := 0; r < d; r++ {
			q[r*k+c] = 0
		}
		q[e*k+c] = 1
		projectOut(q, d, k, c)
		if norm := colNorm(q, d, k, c); norm > 0.5 {
			for r := 0; r < d; r++ {
				q[r*k+c] /= norm
			}
			return
		}
	}
}

func colNorm(q []float64, d, k, c int) float64 {
	var s float64
	for r := 0; r < d; r++ {
		s += q[r*k+c] * q[r*k+c]
	}
	return math.Sqrt(s)
}

// rowTimesTo sets dst (k) = xᵀ Q for a d-vector x and a d×k matrix Q.
func rowTimesTo(dst, x, q []float64, k int) {
	clear(dst[:k])
	for r, xv := range x {
		if xv == 0 {
			continue
		}
		qr := q[r*k : (r+1)*k]
		for a, v := range qr {
			dst[a] += xv * v
		}
	}
}

// addOuter adds f·x coefᵀ to the d×k matrix dst.
func addOuter(dst, x, coef []float64, f float64) {
	k := len(coef)
	for r, xv := range x {
		s := f * xv
		row := dst[r*k : (r+1)*k]
		for a, c := range coef {
			row[a] += s * c
		}
	}
}
