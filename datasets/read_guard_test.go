//go:build unix

package datasets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestByteOrderMark reads CSV and LIBSVM files that start with a UTF-8
// byte-order mark, as some editors write them: the mark is not data.
func TestByteOrderMark(t *testing.T) {
	s, err := ReadCSV(strings.NewReader("\xef\xbb\xbfy,a\n1,2\n0,3\n"), "bom.csv", false)
	if err != nil || s.N != 2 || !slices.Equal(s.X, []float64{2, 3}) || !slices.Equal(s.Y, []float64{1, 0}) {
		t.Errorf("CSV with a header and a BOM: %v, %v; want 2 rows X=[2 3] Y=[1 0]", s, err)
	}
	s, err = ReadCSV(strings.NewReader("\xef\xbb\xbf1,2\n0,3\n"), "bom.csv", false)
	if err != nil || s.N != 2 || !slices.Equal(s.Y, []float64{1, 0}) {
		t.Errorf("CSV without a header, with a BOM: %v, %v; want 2 rows", s, err)
	}
	s, err = ReadLIBSVM(strings.NewReader("\xef\xbb\xbf1 1:2\n"), "bom.libsvm")
	if err != nil || s.N != 1 || !slices.Equal(s.X, []float64{2}) {
		t.Errorf("LIBSVM with a BOM: %v, %v; want one row X=[2]", s, err)
	}
}

// TestFeatureIndexLimit refuses an index above MaxFeatureIndex (or beyond
// an int) on the line that holds it, before anything is allocated.
func TestFeatureIndexLimit(t *testing.T) {
	for _, idx := range []string{fmt.Sprint(MaxFeatureIndex + 1), "50000000", "99999999999999999999999"} {
		_, err := ReadLIBSVM(strings.NewReader("1 1:1\n2 "+idx+":1\n"), "big.libsvm")
		var fe *FileError
		if !errors.As(err, &fe) || fe.Line != 2 || !strings.Contains(fe.Msg, "exceeds") {
			t.Errorf("index %s: err = %v, want a FileError on line 2 saying it exceeds the limit", idx, err)
		}
	}
	if s, err := ReadLIBSVM(strings.NewReader(fmt.Sprintf("1 %d:1\n", MaxFeatureIndex)), "edge.libsvm"); err != nil || s.Dim != MaxFeatureIndex {
		t.Errorf("index at the limit: %v", err)
	}
}

// TestCheckBeforeAllocating checks that ReadFileContext hands the counted
// rows and largest index to Check before allocating them, and stops when
// Check refuses.
func TestCheckBeforeAllocating(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.libsvm")
	os.WriteFile(path, []byte("1 3:1\n2 500000:1\n"), 0o644)
	var rows, dim int
	refuse := errors.New("too large for memory")
	_, err := ReadFileContext(context.Background(), path, ReadOptions{Check: func(r, d int) error { rows, dim = r, d; return refuse }})
	if !errors.Is(err, refuse) || rows != 2 || dim != 500000 {
		t.Errorf("Check saw %d rows × %d features and the read returned %v; want 2 × 500000 and the refusal", rows, dim, err)
	}
	csv := filepath.Join(t.TempDir(), "a.csv")
	os.WriteFile(csv, []byte("y,a,b\n1,2,3\n"), 0o644)
	_, err = ReadFileContext(context.Background(), csv, ReadOptions{Check: func(r, d int) error { rows, dim = r, d; return nil }})
	if err != nil || rows != 1 || dim != 2 {
		t.Errorf("CSV: Check saw %d × %d (err %v), want 1 × 2", rows, dim, err)
	}
}

// TestReadIsCancellable cancels the context from the check between the two
// passes: the read stops with context.Canceled before the second pass, and
// a context cancelled before the first pass stops it at once.
func TestReadIsCancellable(t *testing.T) {
	var b strings.Builder
	for i := range 3 * checkEvery {
		fmt.Fprintf(&b, "%d 1:%d\n", i%2, i)
	}
	path := filepath.Join(t.TempDir(), "long.libsvm")
	os.WriteFile(path, []byte(b.String()), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := ReadFileContext(ctx, path, ReadOptions{Check: func(int, int) error { cancel(); return nil }})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled between the passes: err = %v, want context.Canceled", err)
	}
	if _, err := ReadFileContext(ctx, path, ReadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err = %v, want context.Canceled", err)
	}
}

// TestNotRegularFileIsRefused refuses a FIFO (no writer: opening it would
// block forever), a directory and, as root, a device — without blocking.
func TestNotRegularFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{fifo: "FIFO", dir: "directory"}
	if dev := filepath.Join(dir, "null"); syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3) == nil {
		paths[dev] = "device"
	} else {
		t.Log("mknod failed (not root?): the device case is skipped")
	}
	for path, kind := range paths {
		for name, read := range map[string]func() error{
			"ReadFile":      func() error { _, err := ReadFile(path, FormatAuto, false); return err },
			"CheckReadable": func() error { return CheckReadable(path) },
		} {
			err := read()
			var fe *FileError
			if !errors.As(err, &fe) || !strings.Contains(fe.Msg, kind) || !strings.Contains(fe.Msg, "not a data file") {
				t.Errorf("%s(%s): err = %v, want a FileError saying it is a %s, not a data file", name, kind, err, kind)
			}
		}
	}
}

// TestFileNameWithLineBreak keeps the message on one line.
func TestFileNameWithLineBreak(t *testing.T) {
	err := CheckReadable(filepath.Join(t.TempDir(), "a\nb.csv"))
	if err == nil || strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("err = %q, want a one-line error", err)
	}
}

func TestDistinct(t *testing.T) {
	a := &Set{Y: []float64{1, 2, 2, 3}}
	b := &Set{Y: []float64{3, 4}}
	if got := Distinct(10, a, b); got != 4 {
		t.Errorf("Distinct = %d, want 4", got)
	}
	if got := Distinct(2, a, b); got != 3 {
		t.Errorf("Distinct(limit 2) = %d, want 3 (stops past the limit)", got)
	}
}
