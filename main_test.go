//go:build unix

package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain makes the test binary fedscope itself when FEDSCOPE_AS_MAIN is
// set, so that the signal tests run the real main (its one signal owner)
// without building a second binary.
func TestMain(m *testing.M) {
	if os.Getenv("FEDSCOPE_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// fedscope starts the program with args; stdout is a pipe the test reads.
func fedscope(t *testing.T, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FEDSCOPE_AS_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, &stderr
}

// exitStatus waits for cmd and returns its exit status.
func exitStatus(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("killed by %v instead of exiting", ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// TestSignalDuringPreparation interrupts a data preparation that takes
// many seconds (10000 clients in d = 2000 dealt to random features). The
// --out is a FIFO, which fedscope opens (waiting for this test to read
// it) after installing its signal handler and before it starts the run:
// once the open returns, the signal lands in the preparation. fedscope
// exits with 130 at once, says no row was computed, and writes nothing.
func TestSignalDuringPreparation(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := fedscope(t, "run", "--preset", "newton-rounds", "--set", "clients=10000", "--set", "dim=2000",
		"--set", "samples=2", "--out", fifo)
	defer stdout.Close()
	f, err := os.Open(fifo) // returns once fedscope has opened --out
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	rows, _ := io.ReadAll(f)
	status := exitStatus(t, cmd)
	t.Logf("exited %v after the signal", time.Since(sent).Round(time.Millisecond))
	if status != 130 || len(rows) != 0 || !strings.Contains(stderr.String(), "before any row was computed") {
		t.Errorf("status %d, %d bytes written, stderr %q; want 130, nothing and a message saying no row was computed", status, len(rows), stderr)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("--out %s is no longer a FIFO: %v", fifo, err)
	}
}

// TestSignalDuringSweep sends SIGTERM to a sweep while it runs (synced
// on the FIFO of --out, as above): the status is 143 and whatever was
// written is a whole table whose row count the message states.
func TestSignalDuringSweep(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "sweep.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := fedscope(t, "sweep", "--preset", "fedgain-model", "--trials", "10000", "--out", fifo)
	defer stdout.Close()
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	out, _ := io.ReadAll(f)
	if status := exitStatus(t, cmd); status != 143 {
		t.Errorf("status %d, want 143; stderr %q", status, stderr)
	}
	if len(out) == 0 {
		if !strings.Contains(stderr.String(), "before any row was computed") {
			t.Errorf("nothing written, stderr %q", stderr)
		}
		return
	}
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil || !strings.Contains(stderr.String(), fmt.Sprintf("wrote the %d rows", len(recs)-1)) {
		t.Errorf("%d records (%v), stderr %q", len(recs), err, stderr)
	}
}

// TestDataFIFOIsRefused gives a FIFO nobody writes as data=: refused with
// status 2 before anything opens it (it used to block forever).
func TestDataFIFOIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "data.libsvm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := fedscope(t, "run", "--preset", "newton-rounds", "--set", "data="+fifo)
	io.Copy(io.Discard, stdout)
	if status := exitStatus(t, cmd); status != 2 || !strings.Contains(stderr.String(), "FIFO") {
		t.Errorf("status %d, stderr %q; want 2 and a message naming the FIFO", status, stderr)
	}
}
