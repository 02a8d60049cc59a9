package model

import (
	"math"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Mixture is a mixed-regression federation prepared for the two-phase
// clustered algorithm (docs/papers.md §5, paper 004): the statistics of the
// Phase-2 clients, their weights n_i/N, and the scoring that needs the true
// labels. It is shared, read-only, by every racer and re-run.
type Mixture struct {
	Fed     *datasets.MixtureFederation
	Dim, K  int
	N       int       // Σ n_i over the Phase-2 clients
	Clients []Stats   // Phase-2 clients, same order as Fed.Clients
	Weights []float64 // n_i/N
	MaxN    int       // largest n_i

	curvOnce sync.Once
	curv     float64

	// The clients' Hessian spectra (for Phase2AtTruth), computed once, and
	// its results per local update.
	specOnce sync.Once
	spec     []clientSpectrum
	truthMu  sync.Mutex
	truth    map[phase2Key]Phase2Truth
}

// NewMixture computes the per-client statistics of the Phase-2 clients.
func NewMixture(fed *datasets.MixtureFederation) *Mixture {
	m := &Mixture{Fed: fed, Dim: fed.Dim, K: fed.K, N: fed.N(), Clients: make([]Stats, len(fed.Clients)),
		Weights: make([]float64, len(fed.Clients))}
	parallel.For(len(fed.Clients), func(i int) {
		c := &fed.Clients[i]
		m.Clients[i] = NewStats(c.X, c.Y, c.N, fed.Dim)
	})
	for i := range m.Clients {
		m.Weights[i] = float64(m.Clients[i].N) / float64(m.N)
		m.MaxN = max(m.MaxN, m.Clients[i].N)
	}
	return m
}

// Curvature returns max_i λ_max(X_iᵀX_i/n_i) over the Phase-2 clients,
// computed once. γ = η·Curvature() is the stability constant of docs/papers.md
// §5.4 (γ < 1 required).
func (m *Mixture) Curvature() float64 {
	m.curvOnce.Do(func() {
		cs := make([]float64, len(m.Clients))
		parallel.For(len(cs), func(i int) { cs[i] = m.Clients[i].MaxCurvature() })
		for _, c := range cs {
			m.curv = math.Max(m.curv, c)
		}
	})
	return m.curv
}

// GammaKappa returns the stability constants of docs/papers.md §5.4 for step η:
// γ = η max_i ‖φ(x_i)‖²/n_i and κ = γs/(1 − (1−γ)^s) for FedAvg with s local
// steps, or κ = 1 + γ for FedProx (prox = true).
func (m *Mixture) GammaKappa(eta float64, s int, prox bool) (gamma, kappa float64) {
	gamma = eta * m.Curvature()
	switch {
	case prox:
		kappa = 1 + gamma
	case gamma == 0:
		kappa = 1
	default:
		kappa = gamma * float64(s) / (1 - math.Pow(1-gamma, float64(s)))
	}
	return gamma, kappa
}

// NewWorkspace returns scratch memory for the local steps of any Phase-2
// client; one workspace serves one goroutine.
func (m *Mixture) NewWorkspace() *Workspace {
	return &Workspace{dvec: make([]float64, m.Dim), nvec: make([]float64, m.MaxN)}
}

// ResidualSq returns ‖y_i − X_i θ‖², the quantity a client minimises over the
// cluster models to pick its label (docs/papers.md §5.4 step 2). It allocates
// nothing.
func (s *Stats) ResidualSq(theta []float64) float64 {
	var sum float64
	tv := vec(theta)
	for j := 0; j < s.N; j++ {
		r := s.Y[j] - blas64.Dot(vec(s.X[j*s.Dim:(j+1)*s.Dim]), tv)
		sum += r * r
	}
	return sum
}

// ClusterScore is the evaluation of one round of a clustered algorithm.
type ClusterScore struct {
	Distance     float64 // d(θ̂, θ*) = min_π max_j ‖θ̂_π(j) − θ*_j‖
	Perm         []int   // the best π: Perm[j] is the estimate matched to truth j
	Misclustered float64 // fraction of Phase-2 clients whose relabelled assignment is wrong; NaN without assignments
	// ClientError is Σ_i (n_i/N) ‖θ_{z_i,t} − θ*_{z*_i}‖, the error of the
	// model each client uses (docs/papers.md §5.4, per-client error); NaN without
	// assignments.
	ClientError float64
	Assign      []int // assignments relabelled by Perm (comparable with the true labels); nil without assignments
}

// Score evaluates centres (k×d row-major, the algorithm's own labelling) and,
// when assign is not nil, the clients' picked labels in that labelling.
func (m *Mixture) Score(centres []float64, assign []int) ClusterScore {
	d, k := m.Dim, m.K
	est := make([][]float64, k)
	for j := range est {
		est[j] = centres[j*d : (j+1)*d]
	}
	dist, perm := ClusterDistance(est, m.Fed.Truths)
	sc := ClusterScore{Distance: dist, Perm: perm, Misclustered: math.NaN(), ClientError: math.NaN()}
	if assign == nil {
		return sc
	}
	sc.Assign = make([]int, len(assign))
	Relabel(sc.Assign, assign, perm)
	sc.Misclustered = Misclustered(sc.Assign, m.Fed.Labels)
	var ce float64
	for i, a := range assign {
		ce += m.Weights[i] * Distance(est[a], m.Fed.Truths[m.Fed.Labels[i]])
	}
	sc.ClientError = ce
	return sc
}

// TruthMisclustered returns the fraction of the Phase-2 clients, and of
// their data (weights n_i/N), that pick a wrong cluster when every client
// chooses by the smallest residual at the true models θ* (docs/papers.md §5.4
// step 2). It estimates the misclustering floor of Thm 2,
// ν₁ = (1/N) Σ_i n_i p_e(n_i), p_e(n) = 4k exp(−c n (1 ∧ Δ²/σ²)²): no run of
// Phase 2 is expected to misclassify fewer. Ties count as correct only when
// the true cluster is the lowest index among them, as in Phase 2.
func (m *Mixture) TruthMisclustered() (clients, data float64) {
	wrong := make([]bool, len(m.Clients))
	parallel.For(len(m.Clients), func(i int) {
		z, best := 0, math.Inf(1)
		for j, t := range m.Fed.Truths {
			if r := m.Clients[i].ResidualSq(t); r < best {
				z, best = j, r
			}
		}
		wrong[i] = z != m.Fed.Labels[i]
	})
	for i, w := range wrong {
		if w {
			clients++
			data += m.Weights[i]
		}
	}
	return clients / float64(len(wrong)), data
}

// Phase2Truth is Phase 2 with the clients' labels held at the truth
// (docs/papers.md §5.4, Lemma 1 with Λ_{j,t} fixed): cluster j's model follows the
// affine map θ_j ← (I − H_j) θ_j + c_j with
//
//	H_j = Σ_{i: z_i = j} (n_i/N) (I − L_i),  c_j = Σ_{i: z_i = j} (n_i/N) b_i,
//
// where client i's local update is u = L_i θ + b_i: L_i = A_i^s,
// b_i = Σ_{τ<s} A_i^τ (η/n_i) X_iᵀy_i, A_i = I − (η/n_i) X_iᵀX_i (FedAvg), or
// L_i = B_i, b_i = B_i (η/n_i) X_iᵀy_i, B_i = (I + (η/n_i) X_iᵀX_i)⁻¹ (FedProx).
// It is what the clustered iteration converges to once the assignments
// settle, and how fast.
type Phase2Truth struct {
	// Rate is the contraction per round of the slowest cluster,
	// max_j ρ(I − H_j) (1 when a cluster has no client or no curvature
	// along some direction; above 1 when η is unstable).
	Rate float64
	// Floor is d(θ^∞, θ*) of the fixed point θ^∞_j = H_j⁻¹ c_j: the distance
	// Phase 2 approaches without misclustering; NaN when some H_j is
	// singular.
	Floor float64
}

type phase2Key struct {
	eta  float64
	s    int
	prox bool
}

// clientSpectrum is X_iᵀX_i/n_i = V diag(λ) Vᵀ and Vᵀ(X_iᵀy_i/n_i).
type clientSpectrum struct {
	vals []float64
	vecs *mat.Dense
	xty  []float64 // in the eigenbasis
}

// maxTruthWork bounds the work of Phase2AtTruth (M·d³ flops): beyond it the
// analysis is skipped rather than stall the views.
const maxTruthWork = 2e9

// Phase2AtTruth analyses Phase 2 with the labels held at the truth for the
// local update (η, s FedAvg steps, or FedProx with prox). Scoring only: no
// algorithm may use the true labels to fit. It is computed once per local
// update and shared; ok is false when the federation is too large to
// decompose every client's Hessian (M·d³ above 2·10⁹).
func (m *Mixture) Phase2AtTruth(eta float64, s int, prox bool) (Phase2Truth, bool) {
	d := float64(m.Dim)
	if float64(len(m.Clients))*d*d*d > maxTruthWork {
		return Phase2Truth{Rate: math.NaN(), Floor: math.NaN()}, false
	}
	if prox {
		s = 0
	}
	key := phase2Key{eta, s, prox}
	m.truthMu.Lock()
	defer m.truthMu.Unlock()
	if r, ok := m.truth[key]; ok {
		return r, true
	}
	m.specOnce.Do(m.spectra)
	r := m.phase2AtTruth(eta, s, prox)
	if m.truth == nil || len(m.truth) >= 8 {
		m.truth = map[phase2Key]Phase2Truth{}
	}
	m.truth[key] = r
	return r, true
}

// spectra decomposes every Phase-2 client's X_iᵀX_i/n_i.
func (m *Mixture) spectra() {
	d := m.Dim
	m.spec = make([]clientSpectrum, len(m.Clients))
	parallel.For(len(m.Clients), func(i int) {
		s := &m.Clients[i]
		x := mat.NewDense(s.N, d, s.X)
		var g mat.SymDense
		g.SymOuterK(1/float64(s.N), x.T())
		var eig mat.EigenSym
		if !eig.Factorize(&g, true) {
			panic("model: Phase2AtTruth: eigendecomposition failed")
		}
		var v mat.Dense
		eig.VectorsTo(&v)
		xty := make([]float64, d)
		for j := 0; j < s.N; j++ {
			row := s.X[j*d : (j+1)*d]
			for a, xa := range row {
				xty[a] += xa * s.Y[j] / float64(s.N)
			}
		}
		proj := make([]float64, d)
		mat.NewVecDense(d, proj).MulVec(v.T(), mat.NewVecDense(d, xty))
		m.spec[i] = clientSpectrum{vals: eig.Values(nil), vecs: &v, xty: proj}
	})
}

func (m *Mixture) phase2AtTruth(eta float64, s int, prox bool) Phase2Truth {
	hs, cs := m.truthMaps(eta, s, prox)
	out := Phase2Truth{}
	limits := make([][]float64, m.K)
	for j := range hs {
		rate, limit, ok := fixedPoint(hs[j], cs[j])
		if !ok {
			return Phase2Truth{Rate: math.NaN(), Floor: math.NaN()}
		}
		out.Rate = math.Max(out.Rate, rate)
		if limit == nil {
			out.Floor = math.NaN()
			continue
		}
		limits[j] = limit
	}
	if !math.IsNaN(out.Floor) {
		out.Floor, _ = ClusterDistance(limits, m.Fed.Truths)
	}
	return out
}

// truthMaps returns, per cluster j, the affine map θ_j ↦ θ_j − H_j θ_j + c_j
// of one Phase-2 round with every client at its true label:
// H_j = Σ_{i∈j} w_i (I − L_i) and c_j = Σ_{i∈j} w_i b_i, built from the
// clients' spectra. Per eigenvalue λ of X_iᵀX_i/n_i, I − L_i contracts by
// 1 − g(λ) and b_i applies f(λ) to X_iᵀy_i/n_i:
//
//	FedAvg:  g = (1 − ηλ)^s,  f = η Σ_{τ<s} (1 − ηλ)^τ = (1 − g)/λ;
//	FedProx: g = 1/(1 + ηλ),  f = η/(1 + ηλ).
func (m *Mixture) truthMaps(eta float64, s int, prox bool) ([]*mat.SymDense, []*mat.VecDense) {
	d, k := m.Dim, m.K
	hs := make([]*mat.SymDense, k)
	cs := make([]*mat.VecDense, k)
	for j := range hs {
		hs[j] = mat.NewSymDense(d, nil)
		cs[j] = mat.NewVecDense(d, nil)
	}
	shrink := make([]float64, d)
	scaled := make([]float64, d)
	for i, sp := range m.spec {
		j := m.Fed.Labels[i]
		w := m.Weights[i]
		for a, lam := range sp.vals {
			lam = math.Max(lam, 0)
			var g, f float64
			switch {
			case prox:
				g, f = 1/(1+eta*lam), eta/(1+eta*lam)
			case eta*lam < 1e-12:
				g, f = math.Pow(1-eta*lam, float64(s)), eta*float64(s)
			default:
				g = math.Pow(1-eta*lam, float64(s))
				f = (1 - g) / lam
			}
			shrink[a] = w * (1 - g)
			scaled[a] = w * f * sp.xty[a]
		}
		// H_j += V diag(shrink) Vᵀ, c_j += V (scaled).
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				var sum float64
				for e := 0; e < d; e++ {
					sum += sp.vecs.At(a, e) * shrink[e] * sp.vecs.At(b, e)
				}
				hs[j].SetSym(a, b, hs[j].At(a, b)+sum)
			}
			var sum float64
			for e := 0; e < d; e++ {
				sum += sp.vecs.At(a, e) * scaled[e]
			}
			cs[j].SetVec(a, cs[j].AtVec(a)+sum)
		}
	}
	return hs, cs
}

// fixedPoint returns the contraction rate max |1 − μ| over the eigenvalues
// μ of h, and the fixed point θ^∞ = h⁻¹c of θ ↦ θ − hθ + c (nil when h is
// singular); ok is false when h cannot be factorised.
func fixedPoint(h *mat.SymDense, c *mat.VecDense) (rate float64, limit []float64, ok bool) {
	var eig mat.EigenSym
	if !eig.Factorize(h, true) {
		return 0, nil, false
	}
	vals := eig.Values(nil)
	for _, mu := range vals {
		rate = math.Max(rate, math.Abs(1-mu))
	}
	d := len(vals)
	if vals[0] <= 1e-12*math.Max(1, vals[d-1]) {
		return rate, nil, true
	}
	var v mat.Dense
	eig.VectorsTo(&v)
	// θ^∞ = V diag(1/μ) Vᵀ c.
	var proj mat.VecDense
	proj.MulVec(v.T(), c)
	for a := 0; a < d; a++ {
		proj.SetVec(a, proj.AtVec(a)/vals[a])
	}
	var th mat.VecDense
	th.MulVec(&v, &proj)
	return rate, th.RawVector().Data, true
}
