package model

import (
	"fmt"

	"github.com/fedscope/fedscope/datasets"
)

// FedError selects how the federated error ‖θ_fed − θ_j*‖ of a client is
// measured for the federation gain (docs/papers.md §1.8 and §8, paper 000).
type FedError int

const (
	// FedErrorMin is the minimum over rounds t ≥ 0 of ‖θ_t − θ_j*‖: the
	// paper's infimum over t (early stopping allowed), the default.
	FedErrorMin FedError = iota
	// FedErrorFinal is the error of the final round θ_T.
	FedErrorFinal
	// FedErrorLimit is the error of the closed-form fixed point θ_∞
	// (docs/papers.md §1.6), what the iterates approach as T → ∞.
	FedErrorLimit
)

// FedErrors lists the modes in the order a view cycles through them.
var FedErrors = []FedError{FedErrorMin, FedErrorFinal, FedErrorLimit}

// String returns the mode's name as used on the command line.
func (e FedError) String() string {
	switch e {
	case FedErrorFinal:
		return "final"
	case FedErrorLimit:
		return "limit"
	}
	return "min"
}

// ParseFedError reads "min", "final" or "limit".
func ParseFedError(s string) (FedError, error) {
	for _, e := range FedErrors {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("must be min, final or limit")
}

// Gain returns the federation gain FG_j = local/federated error of a client
// (docs/papers.md §1.8). Definition 1 of paper 000 uses squared errors; the
// figures' magnitudes match the ratio of unsquared errors, which is the
// default (docs/papers.md §7–§8), so squared selects the definition's version.
func Gain(local, federated float64, squared bool) float64 {
	g := local / federated
	if squared {
		return g * g
	}
	return g
}

// GainClients returns the clients whose federation gain the experiments of
// paper 000 report: the first data-scarce client (n_j < d) and the first
// data-rich one (n_j ≥ d), docs/papers.md §8 ("client choice"); −1 when the
// federation has none of that kind.
func GainClients(fed *datasets.Federation) (scarce, rich int) {
	scarce, rich = -1, -1
	for i := range fed.Clients {
		if fed.Clients[i].N < fed.Dim {
			if scarce < 0 {
				scarce = i
			}
		} else if rich < 0 {
			rich = i
		}
	}
	return scarce, rich
}
