//go:build unix

package cli

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The tests of this file signal fedscope while it writes its rows (issue
// 22): the status is the signal's, and the target keeps whole lines, as
// many as the message says. They wait on the child's events and exit,
// never on the clock; the child keeps its own deadlines.

// manyRows is a run with 80 004 rows that computes in a moment.
var manyRows = []string{"run", "--preset", "paradox", "--rounds", "20000", "--set", "clients=2", "--set", "samples=20", "--set", "dim=2"}

var (
	stoppedAfter = regexp.MustCompile(`^fedscope: interrupted while writing the rows: stopped after the first (\d+) lines of the output, which (.*) has, whole; the rest are lost\n$`)
	wroteAll     = regexp.MustCompile(`^fedscope: interrupted while writing the rows; wrote all (\d+) rows to (.*)\n$`)
)

// checkWholeCSV parses the rows a target received: whole CSV records of
// the run's six columns, the last line ended; it returns the line count.
func checkWholeCSV(t *testing.T, b []byte) int {
	t.Helper()
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the output ends inside a line: …%q", b[max(0, len(b)-60):])
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = 6
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("the output is not whole CSV records: %v", err)
	}
	if len(recs) > 0 && recs[0][0] != "algorithm" {
		t.Errorf("the first line is %v, want the header", recs[0])
	}
	return len(recs)
}

// TestSignalDuringFinalWrite sends SIGINT once the run has computed every
// row and begun writing them to a file (the child holds its write until
// the signal has arrived): the status is 130 and the file holds whole
// lines, all the rows or the first lines up to where the deadline stopped
// the write, as the one-line message says; no temporary file is left.
func TestSignalDuringFinalWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.csv")
	os.WriteFile(path, []byte("an older file\n"), 0o644)
	cmd, ready, _, stderr := childWith(t, "FEDSCOPE_SIGNAL_WHEN_WRITING=block", append(manyRows, "--out", path)...)
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		t.Fatalf("the child never began to write: %v; stderr %q", err, stderr)
	}
	ready.Close()
	cmd.Process.Signal(syscall.SIGINT)
	if status := wait(t, cmd); status != 130 {
		t.Errorf("status %d, want 130; stderr %q", status, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := checkWholeCSV(t, b)
	msg := stderr.String()
	if m := stoppedAfter.FindStringSubmatch(msg); m != nil {
		if m[1] != strconv.Itoa(lines) {
			t.Errorf("the message says %s lines, the file has %d", m[1], lines)
		}
	} else if m := wroteAll.FindStringSubmatch(msg); m == nil || m[1] != "80004" || lines != 80005 {
		t.Errorf("stderr %q, %d lines in the file; want the lines written (all 80004 rows and the header, or those before the stop) named in one line",
			msg, lines)
	}
	noTempsIn(t, dir)
}

// TestSignalWithStalledReader: the rows go to a pipe, or a FIFO, whose
// reader stops reading; once the child blocks on it, SIGINT ends it with
// status 130, and what the reader then finds is whole lines, as many as the
// message says.
func TestSignalWithStalledReader(t *testing.T) {
	for _, via := range []string{"standard output", "--out FIFO"} {
		t.Run(via, func(t *testing.T) {
			var r *os.File
			args := manyRows
			var stdout io.Writer
			if via == "standard output" {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				r, stdout = pr, pw
				defer pw.Close()
			} else {
				fifo := filepath.Join(t.TempDir(), "fifo")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
				var err error
				if r, err = os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--out", fifo)
			}
			defer r.Close()
			cmd, ready, stderr := childTo(t, "FEDSCOPE_SIGNAL_WHEN_WRITING=go", stdout, args...)
			if c, ok := stdout.(io.Closer); ok {
				c.Close() // the child has its own copy
			}
			if _, err := ready.Read(make([]byte, 1)); err != nil {
				t.Fatalf("the child never began to write: %v; stderr %q", err, stderr)
			}
			ready.Close()
			// 80 004 rows do not fit in a pipe: the child blocks, before or
			// after the signal.
			cmd.Process.Signal(syscall.SIGINT)
			if status := wait(t, cmd); status != 130 {
				t.Errorf("status %d, want 130; stderr %q", status, stderr)
			}
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			lines := checkWholeCSV(t, b)
			m := stoppedAfter.FindStringSubmatch(stderr.String())
			if m == nil || m[1] != strconv.Itoa(lines) || lines == 0 {
				t.Errorf("stderr %q; the reader found %d whole lines; want one line saying how many", stderr, lines)
			}
		})
	}
}

// childTo starts fedscope in a child process writing its standard output
// to stdout (discarded when nil), which signals on the returned reader as
// `when` says.
func childTo(t *testing.T, when string, stdout io.Writer, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FEDSCOPE_CLI_CHILD=1", when)
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return cmd, r, &stderr
}

// noTempsIn checks that no temporary file of fedscope is left in dir.
func noTempsIn(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".fedscope-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestKilledRunsTempIsRemoved kills a run with SIGKILL once it has begun
// to write its rows to a file: the temporary file it leaves beside the
// target is removed by the next run writing that target (issue 22), and
// the target then holds that run's rows.
func TestKilledRunsTempIsRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.csv")
	cmd, ready, _, stderr := childWith(t, "FEDSCOPE_SIGNAL_WHEN_WRITING=block", append(manyRows, "--out", path)...)
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		t.Fatalf("the child never began to write: %v; stderr %q", err, stderr)
	}
	ready.Close()
	cmd.Process.Kill()
	cmd.Wait()
	left, _ := filepath.Glob(filepath.Join(dir, ".rows.csv.fedscope-*"))
	if len(left) != 1 {
		t.Fatalf("temporary files after SIGKILL: %v, want the one the killed run left", left)
	}
	if _, errs, code := command(t, "run", "--preset", "paradox", "--rounds", "2", "--out", path); code != 0 {
		t.Fatalf("the next run: exit %d: %s", code, errs)
	}
	noTempsIn(t, dir)
	if b, err := os.ReadFile(path); err != nil || checkWholeCSV(t, b) != 13 {
		t.Errorf("rows.csv: %v; want the header and 12 rows of the next run", err)
	}
}
