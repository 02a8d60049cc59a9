//go:build unix

package output

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// deadPID returns the process ID of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestStaleTempsRemoved: writing a target removes the temporary files a
// killed fedscope left beside it (named either way), and keeps those of a
// live process, those locked by a writer (another machine's, sharing the
// directory) and those of other targets.
func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	dead := deadPID(t)
	file := func(name string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gone := []string{file(fmt.Sprintf(".x.csv.fedscope-%d-0", dead)), file(fmt.Sprintf(".x.csv.fedscope-%d-3.tmp", dead))}
	kept := []string{
		file(fmt.Sprintf(".x.csv.fedscope-%d-0.tmp", os.Getppid())), // a live process
		file(fmt.Sprintf(".y.csv.fedscope-%d-0.tmp", dead)),         // another target
		file(fmt.Sprintf(".x.csv.fedscope-%d-9.tmp.bak", dead)),     // not a name fedscope makes
	}
	locked := file(fmt.Sprintf(".x.csv.fedscope-%d-1.tmp", dead))
	kept = append(kept, locked)
	lf, err := os.Open(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	// The lock must come from another open file description, as another
	// process's would: flock is per description.
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Skipf("no file locks here: %v", err)
	}
	mustWrite(t, filepath.Join(dir, "x.csv"))
	for _, p := range gone {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s, left by a process that is gone, was not removed", filepath.Base(p))
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	if got := content(t, filepath.Join(dir, "x.csv")); got != rows {
		t.Errorf("x.csv holds %q, want the rows", got)
	}
}

// TestTempPID reads the names of temporary files, whatever bytes the
// target's name holds, and nothing else.
func TestTempPID(t *testing.T) {
	for _, c := range []struct {
		name, base string
		pid        int
		ok         bool
	}{
		{".x.csv.fedscope-123-0.tmp", "x.csv", 123, true},
		{".x.csv.fedscope-123-4", "x.csv", 123, true}, // before issue 22: no .tmp
		{".A\xbfk.fedscope-7-1.tmp", "A\xbfk", 7, true},
		{".x.csv.fedscope-12a-0.tmp", "x.csv", 0, false},
		{".x.csv.fedscope-123.tmp", "x.csv", 0, false},
		{".x.csv.fedscope--0.tmp", "x.csv", 0, false},
		{".y.csv.fedscope-123-0.tmp", "x.csv", 0, false},
		{"x.csv", "x.csv", 0, false},
	} {
		pid, ok := tempPID(c.name, c.base)
		if pid != c.pid || ok != c.ok {
			t.Errorf("tempPID(%q, %q) = %d, %v; want %d, %v", c.name, c.base, pid, ok, c.pid, c.ok)
		}
	}
}
