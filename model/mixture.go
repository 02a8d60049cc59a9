package model

import (
	"math"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas/blas64"
)

// Mixture is a mixed-regression federation prepared for the two-phase
// clustered algorithm (PAPERS.md §5, paper 004): the statistics of the
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
// computed once. γ = η·Curvature() is the stability constant of PAPERS.md
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

// GammaKappa returns the stability constants of PAPERS.md §5.4 for step η:
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
// cluster models to pick its label (PAPERS.md §5.4 step 2). It allocates
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
	// model each client uses (PAPERS.md §5.4, per-client error); NaN without
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
