// Package slowtest marks the tests that repeat a whole run, sweep or
// series of screens. CI runs every test once as the README says (go test
// ./...), then again under the race detector with -short, where these
// would take minutes each and add nothing the plain run did not check
// (docs/codebase.md §6).
package slowtest

import "testing"

// Skip skips t under -short.
func Skip(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("a whole-run replication: go test without -short runs it")
	}
}
