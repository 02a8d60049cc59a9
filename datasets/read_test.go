package datasets

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadLIBSVM(t *testing.T) {
	in := "# a comment\n1 1:0.5 3:2\n\n-1 2:1e-1 # trailing\r\n2\t1:1  4:-3\n"
	s, err := ReadLIBSVM(strings.NewReader(in), "x.libsvm")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, 0, 2, 0, 0, 0.1, 0, 0, 1, 0, 0, -3}
	if s.N != 3 || s.Dim != 4 || !slices.Equal(s.X, want) || !slices.Equal(s.Y, []float64{1, -1, 2}) {
		t.Errorf("got N=%d d=%d X=%v Y=%v; want N=3 d=4 X=%v Y=[1 -1 2]", s.N, s.Dim, s.X, s.Y, want)
	}
}

func TestReadCSV(t *testing.T) {
	in := "label,a,b\n1, 0.5 ,2\n\n0,1,-3\r\n"
	for _, last := range []bool{false, true} {
		s, err := ReadCSV(strings.NewReader(in), "x.csv", last)
		if err != nil {
			t.Fatal(err)
		}
		wantX, wantY := []float64{0.5, 2, 1, -3}, []float64{1, 0}
		if last {
			wantX, wantY = []float64{1, 0.5, 0, 1}, []float64{2, -3}
		}
		if s.N != 2 || s.Dim != 2 || !slices.Equal(s.X, wantX) || !slices.Equal(s.Y, wantY) {
			t.Errorf("labelLast=%v: got N=%d d=%d X=%v Y=%v; want X=%v Y=%v", last, s.N, s.Dim, s.X, s.Y, wantX, wantY)
		}
	}
}

// TestMalformed checks that broken files give a *FileError naming the file,
// the line and the problem.
func TestMalformed(t *testing.T) {
	for _, test := range []struct {
		name, format, in string
		line             int
		msg              string
	}{
		{"zero index", "libsvm", "1 1:2\n1 0:3\n", 2, "index \"0\" is not a positive"},
		{"negative index", "libsvm", "1 -2:3\n", 1, "not a positive whole number"},
		{"text index", "libsvm", "1 1:1\n\n1 a:3\n", 3, "index \"a\""},
		{"decreasing index", "libsvm", "1 3:1 2:1\n", 1, "indices must increase"},
		{"repeated index", "libsvm", "1 3:1 3:1\n", 1, "indices must increase"},
		{"no colon", "libsvm", "1 3\n", 1, "not index:value"},
		{"bad value", "libsvm", "1 1:1\n2 1:x\n", 2, "value of index 1: \"x\" is not a number"},
		{"nan value", "libsvm", "1 1:NaN\n", 1, "not a finite number"},
		{"bad label", "libsvm", "one 1:1\n", 1, "label \"one\" is not a number"},
		{"empty libsvm", "libsvm", "", 0, "empty file"},
		{"comments only", "libsvm", "# nothing\n\n", 0, "empty file"},
		{"labels only", "libsvm", "1\n2\n", 0, "no features"},
		{"non-number", "csv", "1,2,3\n4,five,6\n", 2, "column 2: \"five\" is not a number"},
		{"mixed header", "csv", "label,2,3\n", 1, "column 1: \"label\" is not a number"},
		{"inconsistent columns", "csv", "1,2,3\n4,5\n", 2, "2 columns, but 3 on line 1"},
		{"inconsistent after header", "csv", "y,a\n1,2\n3,4,5\n", 3, "3 columns, but 2 on line 1"},
		{"empty field", "csv", "1,,3\n", 1, "column 2: is empty"},
		{"empty csv", "csv", "", 0, "empty file"},
		{"header only", "csv", "y,a,b\n", 0, "empty file"},
		{"one column", "csv", "1\n2\n", 1, "at least one feature column"},
		{"inf", "csv", "1,inf\n", 1, "not a finite number"},
	} {
		t.Run(test.name, func(t *testing.T) {
			var err error
			if test.format == "csv" {
				_, err = ReadCSV(strings.NewReader(test.in), "d."+test.format, false)
			} else {
				_, err = ReadLIBSVM(strings.NewReader(test.in), "d."+test.format)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FileError", err)
			}
			if fe.File != "d."+test.format || fe.Line != test.line || !strings.Contains(fe.Msg, test.msg) {
				t.Errorf("err = %q (line %d), want line %d and %q", err, fe.Line, test.line, test.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(path, []byte("1,2\n0,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadFile(path, FormatAuto, false); err != nil || s.N != 2 {
		t.Errorf("ReadFile(csv) = %v, %v", s, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), FormatAuto, false); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: err = %v, want one naming the file", err)
	}
	if _, err := ReadFile(dir, FormatAuto, false); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: err = %v", err)
	}
}

func TestClassify(t *testing.T) {
	train := &Set{N: 3, Dim: 1, X: make([]float64, 3), Y: []float64{7, -1, 7}}
	test := &Set{N: 2, Dim: 1, X: make([]float64, 2), Y: []float64{3, -1}}
	if !Categorical(train, test) {
		t.Fatal("whole-number labels not categorical")
	}
	Classify(train, test)
	if train.Classes != 3 || !slices.Equal(train.Y, []float64{2, 0, 2}) || !slices.Equal(test.Y, []float64{1, 0}) ||
		strings.Join(train.Names, " ") != "-1 3 7" {
		t.Errorf("classes %d %v, train %v, test %v", train.Classes, train.Names, train.Y, test.Y)
	}
	if Categorical(&Set{Y: []float64{0.5}}) {
		t.Error("0.5 taken as a class")
	}
}

// fuzzReader checks the invariants every input must keep: no panic; either
// an error naming the file, or a consistent set.
func fuzzReader(t *testing.T, data []byte, read func([]byte) (*Set, error)) {
	s, err := read(data)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "f:") || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %q does not start with the file name or spans lines", err)
		}
		return
	}
	if s.N < 1 || s.Dim < 1 || len(s.X) != s.N*s.Dim || len(s.Y) != s.N {
		t.Errorf("inconsistent set: N=%d d=%d len(X)=%d len(Y)=%d", s.N, s.Dim, len(s.X), len(s.Y))
	}
}

func FuzzReadLIBSVM(f *testing.F) {
	for _, seed := range []string{"1 1:0.5 3:2\n-1 2:1\n", "", "1 0:1", "1 2:1 1:1", "# c\n\n2 1:1e308 5:-1e-300\n",
		"1 1:x", "1 1:1:1", "+1 99:1\r\n", "1 1:NaN", "nan", "1 2147483648:1"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReader(t, data, func(b []byte) (*Set, error) { return ReadLIBSVM(bytes.NewReader(b), "f") })
	})
}

func FuzzReadCSV(f *testing.F) {
	for _, seed := range []string{"y,a,b\n1,2,3\n", "1,2\n3\n", "", ",", "1,,2", "a,b\n", "1;2", "1,2\r\n3,4\r\n", "\"1\",2"} {
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, last bool) {
		fuzzReader(t, data, func(b []byte) (*Set, error) { return ReadCSV(bytes.NewReader(b), "f", last) })
	})
}
