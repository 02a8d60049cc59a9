//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain makes the test binary run fedscope's command line, wired as
// main.go wires it (one signal owner, Interrupt), when FEDSCOPE_CLI_CHILD
// is set: the signal tests send real signals to that child. With
// FEDSCOPE_SIGNAL_AFTER_ROWS=k the child writes one byte to descriptor 3
// once it has computed k rows, so the test knows the run is under way
// without looking at a clock; with FEDSCOPE_SIGNAL_WHEN_WRITING=go it does
// so when it begins to write its rows, and with =block it then also waits
// for the signal before writing, so that the signal comes during the write.
func TestMain(m *testing.M) {
	if os.Getenv("FEDSCOPE_CLI_CHILD") != "1" {
		os.Exit(m.Run())
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, cancel := context.WithCancelCause(context.Background())
	if k, err := strconv.Atoi(os.Getenv("FEDSCOPE_SIGNAL_AFTER_ROWS")); err == nil {
		ready, rows := os.NewFile(3, "ready"), 0
		hooks.row = func() {
			if rows++; rows == k {
				ready.Write([]byte{1})
				ready.Close()
			}
		}
	}
	if when := os.Getenv("FEDSCOPE_SIGNAL_WHEN_WRITING"); when != "" {
		ready := os.NewFile(3, "ready")
		hooks.write = func() {
			ready.Write([]byte{1})
			ready.Close()
			if when == "block" {
				<-ctx.Done()
			}
		}
	}
	go Interrupt(sigs, cancel, func(s string) { fmt.Fprint(os.Stderr, s) }, os.Exit)
	os.Exit(Main(ctx, os.Args[1:], "test", os.Stdout, os.Stderr))
}

// child starts fedscope in a child process that signals on the returned
// reader once it has computed k rows.
func child(t *testing.T, k int, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return childWith(t, "FEDSCOPE_SIGNAL_AFTER_ROWS="+strconv.Itoa(k), args...)
}

// childWith is child with the variable that says when the child signals.
func childWith(t *testing.T, when string, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FEDSCOPE_CLI_CHILD=1", when)
	cmd.ExtraFiles = []*os.File{w}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return cmd, r, &stdout, &stderr
}

// wait returns the exit status of cmd; being killed by a signal fails the
// test (fedscope must exit with a status).
func wait(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("killed by %v instead of exiting", ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestSignalsDuringRun sends SIGINT, SIGTERM and SIGHUP to a long run once
// it has computed 50 rounds: the rows so far reach standard output whole
// (every record complete, as many as the message says) and the status is
// 130, 143 and 129.
func TestSignalsDuringRun(t *testing.T) {
	for _, test := range []struct {
		sig    syscall.Signal
		status int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		cmd, ready, stdout, stderr := child(t, 50, "run", "--preset", "paradox", "--rounds", "100000")
		if _, err := ready.Read(make([]byte, 1)); err != nil {
			t.Fatalf("%v: the child never computed 50 rows: %v; stderr %q", test.sig, err, stderr)
		}
		ready.Close()
		sent := time.Now()
		cmd.Process.Signal(test.sig)
		status := wait(t, cmd)
		t.Logf("%v: exited %v after the signal", test.sig, time.Since(sent).Round(time.Millisecond))
		if status != test.status {
			t.Errorf("%v: status %d, want %d; stderr %q", test.sig, status, test.status, stderr)
		}
		recs, err := csv.NewReader(bytes.NewReader(stdout.Bytes())).ReadAll()
		if err != nil || len(recs) < 51 || len(recs) > 400_000 || recs[0][0] != "algorithm" {
			t.Errorf("%v: standard output is not a whole table of the rows so far: %d records, %v", test.sig, len(recs), err)
			continue
		}
		want := fmt.Sprintf("wrote the %d rows computed so far to standard output", len(recs)-1)
		if !strings.Contains(stderr.String(), want) || !bytes.HasSuffix(stdout.Bytes(), []byte("\n")) {
			t.Errorf("%v: stderr %q, want %q", test.sig, stderr, want)
		}
	}
}

// TestSignalDuringSweep sends SIGTERM to a sweep after 2 evaluations: the
// values done are written with their trial counts, status 143.
func TestSignalDuringSweep(t *testing.T) {
	cmd, ready, stdout, stderr := child(t, 2, "sweep", "--preset", "polynomial", "--trials", "2000")
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		t.Fatalf("the child never finished 2 evaluations: %v; stderr %q", err, stderr)
	}
	ready.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	if status := wait(t, cmd); status != 143 {
		t.Errorf("status %d, want 143; stderr %q", status, stderr)
	}
	recs, err := csv.NewReader(bytes.NewReader(stdout.Bytes())).ReadAll()
	if err != nil || len(recs) < 2 || !strings.Contains(stderr.String(), fmt.Sprintf("wrote the %d rows", len(recs)-1)) {
		t.Errorf("%d records (%v), stderr %q", len(recs), err, stderr)
	}
}

// TestInterruptTwice checks the second signal: the first cancels with its
// cause, the second ends at once with the first's status (a headless
// command), or is left to the explorer, which restores the terminal first.
func TestInterruptTwice(t *testing.T) {
	for _, inExplorer := range []bool{false, true} {
		explorer.Store(inExplorer)
		sigs := make(chan os.Signal, 2)
		var cause error
		exited := -1
		sigs <- syscall.SIGTERM
		sigs <- syscall.SIGINT
		close(sigs)
		Interrupt(sigs, func(err error) { cause = err }, func(string) {}, func(code int) { exited = code })
		var s Signal
		if !errors.As(cause, &s) || s.Signal != syscall.SIGTERM {
			t.Errorf("cause %v, want the first signal, SIGTERM", cause)
		}
		if want := map[bool]int{false: 143, true: -1}[inExplorer]; exited != want {
			t.Errorf("explorer %v: exit(%d), want %d", inExplorer, exited, want)
		}
	}
	explorer.Store(false)
}

// TestWriteFailureRescuesRows points --out at a device that refuses every
// write (a "full" device, made with mknod in a temporary directory as
// root): the rows are kept in fedscope-rows.csv in the working directory,
// the message says where, the status is 1, and the device stays a device.
func TestWriteFailureRescuesRows(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod of a character device needs root; skipped")
	}
	dir := t.TempDir()
	full := dir + "/full"
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
		t.Skipf("mknod of a full device failed (%v); skipped", err)
	}
	cmd := exec.Command(os.Args[0], "run", "--preset", "paradox", "--rounds", "3", "--out", full)
	cmd.Env = append(os.Environ(), "FEDSCOPE_CLI_CHILD=1")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Start()
	if status := wait(t, cmd); status != ExitFailure || !strings.Contains(stderr.String(), "the 16 rows are in fedscope-rows.csv instead") {
		t.Errorf("status %d, stderr %q; want 1 and the rescue file named", status, stderr)
	}
	b, err := os.ReadFile(dir + "/fedscope-rows.csv")
	if recs, _ := csv.NewReader(bytes.NewReader(b)).ReadAll(); err != nil || len(recs) != 17 {
		t.Errorf("rescue file: %d records, %v; want the header and 16 rows (4 racers × rounds 0..3)", len(recs), err)
	}
	if st, err := os.Stat(full); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is no longer a character device: %v", full, err)
	}
}
