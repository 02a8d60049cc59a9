// Package registry lists fedscope's paper families, in the order their
// presets are shown. Adding a paper is one line here (and its package).
package registry

import (
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/bound"
	"github.com/fedscope/fedscope/experiment/linear"
	"github.com/fedscope/fedscope/experiment/lowrank"
	"github.com/fedscope/fedscope/experiment/mixture"
	"github.com/fedscope/fedscope/experiment/newton"
)

// DefaultPreset opens when fedscope starts without arguments.
const DefaultPreset = "paradox"

// Catalog returns every family fedscope offers.
func Catalog() *experiment.Catalog {
	return experiment.NewCatalog(
		linear.Family,  // 000: the stationary-point paradox, federation gain, polynomial fit
		lowrank.Family, // 001: FedLRGD and federated oracle complexity
		bound.Family,   // 002: FedAvg under the lecture notes' bound
		newton.Family,  // 003: FedNewton, DKRR, KRR
		mixture.Family, // 004: clustered FL for mixed regression
	)
}
