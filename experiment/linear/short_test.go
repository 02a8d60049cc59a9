package linear

import "testing"

// skipShort skips a test that repeats a whole run, sweep or screen series:
// CI runs every test with plain go test, then again under the race
// detector with -short, where these would take minutes (docs/codebase.md §7).
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a whole-run replication: go test without -short runs it")
	}
}
