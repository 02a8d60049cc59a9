package output

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// manyRows writes n CSV lines in pieces that cut lines anywhere (as a
// bufio.Writer does), calling at(i) before line i.
func manyRows(n int, at func(i int)) func(io.Writer) error {
	return func(w io.Writer) error {
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			at(i)
			fmt.Fprintf(&b, "row %d,%s\n", i, strings.Repeat("x", i%97))
			for b.Len() >= 777 { // pieces that end inside a line
				if _, err := w.Write(b.Next(777)); err != nil {
					return err
				}
			}
		}
		_, err := w.Write(b.Bytes())
		return err
	}
}

// wholeLines checks that s is lines "row i,…" i = 0, 1, … each complete,
// and returns how many.
func wholeLines(t *testing.T, s string) int {
	t.Helper()
	if s != "" && !strings.HasSuffix(s, "\n") {
		t.Fatalf("the output ends inside a line: …%q", s[max(0, len(s)-40):])
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if s == "" {
		return 0
	}
	for i, l := range lines {
		if want := fmt.Sprintf("row %d,%s", i, strings.Repeat("x", i%97)); l != want {
			t.Fatalf("line %d is %q, want %q", i+1, l, want)
		}
	}
	return len(lines)
}

// TestStopKeepsWholeLines stops a write to a new file, an existing file
// and standard output at line 5000 of 20000: Write returns ErrStopped, the
// target has exactly the whole lines Lines counts (a file with them in
// place, no temporary file left), and writes after Stop pass nothing on.
func TestStopKeepsWholeLines(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"new.csv", "old.csv", "-"} {
		t.Run(name, func(t *testing.T) {
			var stdout bytes.Buffer
			path := filepath.Join(dir, name)
			if name == "old.csv" {
				os.WriteFile(path, []byte("old\n"), 0o644)
			}
			if name == "-" {
				path = "-"
			}
			tg, err := Open(context.Background(), path, Options{Stdout: &stdout})
			if err != nil {
				t.Fatal(err)
			}
			var lines int64
			err = tg.Write(manyRows(20000, func(i int) {
				if i == 5000 {
					var all bool
					if lines, all = tg.Stop(); all {
						t.Error("Stop says every line was written, at line 5000 of 20000")
					}
				}
			}))
			if !errors.Is(err, ErrStopped) {
				t.Fatalf("Write: %v, want ErrStopped", err)
			}
			got := stdout.String()
			if name != "-" {
				got = content(t, path)
				noTemps(t, dir)
			}
			n := wholeLines(t, got)
			if n == 0 || n > 5000 || int64(n) != lines || tg.Lines() != lines {
				t.Errorf("%d whole lines written, Stop counted %d, Lines %d; want the same count, 1..5000", n, lines, tg.Lines())
			}
		})
	}
}

// TestStopBeforeWriteLeavesFile: a target stopped before its write began
// is left as it was, and its Write writes nothing.
func TestStopBeforeWriteLeavesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.csv")
	os.WriteFile(path, []byte("old\n"), 0o644)
	tg, err := open(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if n, all := tg.Stop(); n != 0 || all {
		t.Errorf("Stop = %d lines (all: %v), want 0, not all", n, all)
	}
	if err := tg.Write(writeRows); !errors.Is(err, ErrStopped) {
		t.Errorf("Write after Stop: %v, want ErrStopped", err)
	}
	if got := content(t, path); got != "old\n" {
		t.Errorf("the file holds %q, want it as it was", got)
	}
	noTemps(t, dir)
}

// stallingWriter takes `take` writes, recording them, then blocks every
// later write until released, as a pipe whose reader stopped reading.
type stallingWriter struct {
	mu      sync.Mutex
	got     [][]byte
	take    int
	blocked chan struct{} // closed when a write blocks
	release chan struct{}
	once    sync.Once
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if len(w.got) < w.take {
		w.got = append(w.got, bytes.Clone(p))
		w.mu.Unlock()
		return len(p), nil
	}
	w.mu.Unlock()
	w.once.Do(func() { close(w.blocked) })
	<-w.release
	return 0, io.ErrClosedPipe
}

// TestStopWithStalledReader: standard output blocks (a pipe nobody reads):
// Stop returns at once with the lines passed on so far; every write the
// reader got was whole lines, at most PipeChunk bytes.
func TestStopWithStalledReader(t *testing.T) {
	w := &stallingWriter{take: 20, blocked: make(chan struct{}), release: make(chan struct{})}
	tg, err := Open(context.Background(), "-", Options{Stdout: w})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tg.Write(manyRows(20000, func(int) {})) }()
	<-w.blocked
	lines, whole := tg.Stop() // must not wait for the blocked write
	if whole {
		t.Error("Stop says every line was written to a blocked reader")
	}
	var all bytes.Buffer
	for i, p := range w.got {
		if len(p) > PipeChunk || !bytes.HasSuffix(p, []byte("\n")) {
			t.Errorf("write %d: %d bytes ending in %q; want whole lines, at most %d bytes", i+1, len(p), p[len(p)-1:], PipeChunk)
		}
		all.Write(p)
	}
	if n := wholeLines(t, all.String()); int64(n) != lines {
		t.Errorf("the reader got %d whole lines, Stop counted %d", n, lines)
	}
	close(w.release)
	if err := <-done; err == nil {
		t.Error("the released write returned no error")
	}
}

// TestLongLinesPassWhole: lines longer than a chunk pass in one write each,
// shorter ones grouped in writes of whole lines; the bytes are unchanged.
func TestLongLinesPassWhole(t *testing.T) {
	w := &stallingWriter{take: 1 << 30}
	tg, err := Open(context.Background(), "-", Options{Stdout: w})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&want, "%d,%s\n", i, strings.Repeat("y", (i*997)%9000))
	}
	want.WriteString("no newline at the end")
	if err := tg.Write(func(w io.Writer) error { _, err := w.Write(want.Bytes()); return err }); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for i, p := range w.got {
		got.Write(p)
		if i < len(w.got)-1 && (!bytes.HasSuffix(p, []byte("\n")) || (len(p) > PipeChunk && bytes.Count(p, []byte("\n")) != 1)) {
			t.Errorf("write %d: %d bytes, %d lines; want whole lines, a long one alone", i+1, len(p), bytes.Count(p, []byte("\n")))
		}
	}
	if got.String() != want.String() {
		t.Errorf("the target got %d bytes, want the %d written", got.Len(), want.Len())
	}
	if tg.Lines() != 50 {
		t.Errorf("Lines = %d, want 50", tg.Lines())
	}
}

// TestStopAfterLastLine: a Stop that comes once the write is done changes
// nothing and says that every line was written.
func TestStopAfterLastLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.csv")
	tg, err := open(t, path)
	if err != nil {
		t.Fatal(err)
	}
	err = tg.Write(func(w io.Writer) error {
		if _, err := io.WriteString(w, rows); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Stop after a complete write changes nothing.
	if n, all := tg.Stop(); n != 2 || !all {
		t.Errorf("Stop after the write = %d lines (all: %v), want 2, all", n, all)
	}
	if got := content(t, path); got != rows {
		t.Errorf("%q, want the rows", got)
	}
}
