package datasets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// MaxFileEntries bounds rows × features of a data file (800 MB of float64),
// so that a wrong file gives an error instead of exhausting memory. MNIST
// (60,000 × 784) fits easily.
const MaxFileEntries = 100_000_000

// maxLine bounds one line of a data file.
const maxLine = 64 << 20

// MaxFeatureIndex bounds the feature indices of a LIBSVM file: a file is
// stored densely (rows × largest index), so an index of 10⁸ in a two-line
// file would ask for gigabytes. A million features is far beyond the data
// sets of the papers (pendigits has 16, MNIST 784).
const MaxFeatureIndex = 1_000_000

// MaxClasses bounds the classes of a classification task: every class is a
// column of the one-hot targets of every client (docs/papers.md §8, paper 003).
const MaxClasses = 1000

// checkEvery is how many lines the readers read between two looks at their
// context.
const checkEvery = 4096

// utf8BOM is the byte-order mark some editors put at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// FileError is a problem in a data file, located by file name and line:
// "train.libsvm:12: index 0 is not a positive whole number".
type FileError struct {
	File string
	Line int // 1-based; 0 when the problem concerns the whole file
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", displayName(e.File), e.Line, e.Msg)
	}
	return displayName(e.File) + ": " + e.Msg
}

// displayName is a file name as a message shows it: quoted when it holds a
// character that is not printable (a line break would split the message).
func displayName(name string) string {
	for _, r := range name {
		if !strconv.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}

// Format is a data-file format.
type Format int

// Data-file formats.
const (
	FormatAuto Format = iota // by extension: .csv is CSV, anything else LIBSVM
	FormatLIBSVM
	FormatCSV
)

// ReadFile reads a LIBSVM or CSV file (see ReadLIBSVM, ReadCSV); labelLast
// applies to CSV. Errors are *FileError (or the open error, wrapped with the
// path).
func ReadFile(path string, f Format, labelLast bool) (*Set, error) {
	return ReadFileContext(context.Background(), path, ReadOptions{Format: f, LabelLast: labelLast})
}

// ReadOptions are the settings of ReadFileContext.
type ReadOptions struct {
	Format    Format
	LabelLast bool // CSV: the label is the last column
	// Check, if set, is called after the first pass has counted the rows and
	// the features and before anything is allocated for them; an error stops
	// the read (the memory guard of a family: rows × features × the random
	// features it will map them to).
	Check func(rows, dim int) error
}

// ReadFileContext is ReadFile that checks ctx between blocks of lines (so
// Ctrl-C ends the read of a large file at once) and calls opt.Check before
// allocating. A path that is not a regular file (a FIFO, a device, a
// directory, a socket) is refused without blocking on it.
func ReadFileContext(ctx context.Context, path string, opt ReadOptions) (*Set, error) {
	fh, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f := opt.Format
	if f == FormatAuto {
		f = FormatLIBSVM
		if strings.EqualFold(filepath.Ext(path), ".csv") {
			f = FormatCSV
		}
	}
	r := &reader{ctx: ctx, check: opt.Check}
	if f == FormatCSV {
		return r.readCSV(fh, path, opt.LabelLast)
	}
	return r.readLIBSVM(fh, path)
}

// CheckRegular returns a *FileError when path is not a regular file (or
// cannot be examined), without opening it: opening a FIFO for reading
// blocks until a writer appears, and a device may never end.
func CheckRegular(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &FileError{File: path, Msg: "cannot read data file: " + err.Error()}
	}
	return regular(path, st)
}

// CheckReadable returns a *FileError when path is not a regular file that
// can be opened for reading; like ReadFileContext it never blocks on a FIFO.
func CheckReadable(path string) error {
	f, err := openRegular(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// regular reports a file that is not a regular file as a *FileError.
func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return &FileError{File: path, Msg: "is " + kind + ", not a data file (a regular LIBSVM or CSV file is needed)"}
}

// openRegular opens a regular file for reading. It looks at the path first
// and opens without blocking, then checks what it opened, so a FIFO put in
// place between the two is refused too instead of hanging the read.
func openRegular(path string) (*os.File, error) {
	if err := CheckRegular(path); err != nil {
		return nil, err
	}
	fh, err := openNonblocking(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &FileError{File: path, Msg: "cannot read data file: " + err.Error()}
	}
	st, err := fh.Stat()
	if err == nil {
		err = regular(path, st)
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// ReadLIBSVM reads the LIBSVM sparse format: one sample per line,
// "label index:value index:value …" with 1-based, strictly increasing
// indices; absent indices are 0. Blank lines and "#" comments are skipped.
// The feature dimension is the largest index. Labels are kept as numbers
// (see Classify). It reads r twice (once to size the data, once to fill it),
// so memory is the data itself; every error names the file and line and
// nothing panics on malformed input.
func ReadLIBSVM(r io.ReadSeeker, name string) (*Set, error) {
	return (&reader{ctx: context.Background()}).readLIBSVM(r, name)
}

// reader carries what ReadFileContext adds to the readers: the context
// checked between blocks of lines and the check before allocating.
type reader struct {
	ctx   context.Context
	check func(rows, dim int) error
}

func (rd *reader) readLIBSVM(r io.ReadSeeker, name string) (*Set, error) {
	rows, dim, err := rd.libsvmShape(r, name)
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, &FileError{File: name, Msg: "no data rows (empty file)"}
	}
	if dim == 0 {
		return nil, &FileError{File: name, Msg: "no features: every row has only a label"}
	}
	if rd.check != nil {
		if err := rd.check(rows, dim); err != nil {
			return nil, err
		}
	}
	if err := rewind(r, name); err != nil {
		return nil, err
	}
	s := &Set{N: rows, Dim: dim, X: make([]float64, rows*dim), Y: make([]float64, rows)}
	err = rd.fillRows(r, name, s, func(_ int, line []byte) ([]byte, bool) {
		line = stripComment(line)
		return line, len(line) > 0
	}, func(no, i int, line []byte) error {
		fields := bytes.Fields(line)
		y, err := parseNumber(fields[0])
		if err != nil {
			return &FileError{name, no, "label " + err.Error()}
		}
		s.Y[i] = y
		row := s.Row(i)
		for _, tok := range fields[1:] {
			idxText, valText, _ := bytes.Cut(tok, []byte(":"))
			idx, err := strconv.Atoi(string(idxText))
			if err != nil || idx < 1 || idx > dim {
				return &FileError{name, no, "file changed while reading"}
			}
			v, err := parseNumber(valText)
			if err != nil {
				return &FileError{name, no, fmt.Sprintf("value of index %d: %v", idx, err)}
			}
			row[idx-1] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// libsvmShape is the first pass over a LIBSVM file: it checks every line's
// indices and counts the rows and the feature dimension (the largest index).
func (rd *reader) libsvmShape(r io.Reader, name string) (rows, dim int, err error) {
	err = rd.eachLine(r, name, func(no int, line []byte) error {
		line = stripComment(line)
		if len(line) == 0 {
			return nil
		}
		prev := 0
		for _, tok := range bytes.Fields(line)[1:] {
			idxText, _, ok := bytes.Cut(tok, []byte(":"))
			if !ok {
				return &FileError{name, no, fmt.Sprintf("%q is not index:value", clip(tok))}
			}
			idx, err := strconv.Atoi(string(idxText))
			if (errors.Is(err, strconv.ErrRange) && idx > 0) || (err == nil && idx > MaxFeatureIndex) {
				return &FileError{name, no, fmt.Sprintf("feature index %s exceeds %d, the largest fedscope reads (files are stored densely)", clip(idxText), MaxFeatureIndex)}
			}
			if err != nil || idx < 1 {
				return &FileError{name, no, fmt.Sprintf("index %q is not a positive whole number (indices are 1-based)", clip(idxText))}
			}
			if idx <= prev {
				return &FileError{name, no, fmt.Sprintf("index %d after %d: indices must increase", idx, prev)}
			}
			prev = idx
		}
		dim = max(dim, prev)
		rows++
		if float64(rows)*float64(max(dim, 1)) > MaxFileEntries {
			return &FileError{name, no, fmt.Sprintf("more than %d numbers (rows × features): too large", MaxFileEntries)}
		}
		return nil
	})
	return rows, dim, err
}

// rewind seeks r back to its start for the second pass.
func rewind(r io.Seeker, name string) error {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// fillRows is the second pass over a file: data picks the data lines (the
// line as parse reads it, or false to skip it) and parse fills row i of s
// from one. A file that has changed since the first pass is refused.
func (rd *reader) fillRows(r io.Reader, name string, s *Set, data func(no int, line []byte) ([]byte, bool),
	parse func(no, i int, line []byte) error) error {
	i := 0
	err := rd.eachLine(r, name, func(no int, line []byte) error {
		line, ok := data(no, line)
		if !ok {
			return nil
		}
		if i >= s.N {
			return &FileError{name, no, "file changed while reading"}
		}
		if err := parse(no, i, line); err != nil {
			return err
		}
		i++
		return nil
	})
	if err != nil {
		return err
	}
	if i != s.N {
		return &FileError{File: name, Msg: "file changed while reading"}
	}
	return nil
}

// ReadCSV reads comma-separated numbers, one sample per line, the label in
// the first column (or the last, with labelLast). A first line made only of
// names is a header and skipped; a line mixing names and numbers is an
// error. Every data line must have the same number of columns. Like
// ReadLIBSVM it reads r twice and reports file and line on every error.
func ReadCSV(r io.ReadSeeker, name string, labelLast bool) (*Set, error) {
	return (&reader{ctx: context.Background()}).readCSV(r, name, labelLast)
}

func (rd *reader) readCSV(r io.ReadSeeker, name string, labelLast bool) (*Set, error) {
	rows, cols, header, err := rd.csvShape(r, name)
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, &FileError{File: name, Msg: "no data rows (empty file)"}
	}
	if cols < 2 {
		return nil, &FileError{File: name, Line: max(header+1, 1), Msg: "need a label column and at least one feature column"}
	}
	if err := rewind(r, name); err != nil {
		return nil, err
	}
	dim := cols - 1
	if rd.check != nil {
		if err := rd.check(rows, dim); err != nil {
			return nil, err
		}
	}
	s := &Set{N: rows, Dim: dim, X: make([]float64, rows*dim), Y: make([]float64, rows)}
	err = rd.fillRows(r, name, s, func(no int, line []byte) ([]byte, bool) {
		line = bytes.TrimSpace(line)
		return line, len(line) > 0 && no != header
	}, func(no, i int, line []byte) error {
		row := s.Row(i)
		col := 0
		for f := range fieldsOf(line) {
			if col >= cols {
				return &FileError{name, no, "file changed while reading"}
			}
			v, err := parseNumber(f)
			if err != nil {
				return &FileError{name, no, fmt.Sprintf("column %d: %v", col+1, err)}
			}
			switch {
			case labelLast && col == dim, !labelLast && col == 0:
				s.Y[i] = v
			case labelLast:
				row[col] = v
			default:
				row[col-1] = v
			}
			col++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// csvShape is the first pass over a CSV file: it counts the data rows and
// the columns, which every data line must share, and finds a header line
// (0 without one): a first line made only of names.
func (rd *reader) csvShape(r io.Reader, name string) (rows, cols, header int, err error) {
	colsLine := 0
	first := true
	err = rd.eachLine(r, name, func(no int, line []byte) error {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return nil
		}
		n := bytes.Count(line, []byte(",")) + 1
		if first {
			first = false
			cols, colsLine = n, no
			if isHeader(line) {
				header = no
				return nil
			}
		}
		if n != cols {
			return &FileError{name, no, fmt.Sprintf("%d columns, but %d on line %d", n, cols, colsLine)}
		}
		rows++
		if float64(rows)*float64(cols) > MaxFileEntries {
			return &FileError{name, no, fmt.Sprintf("more than %d numbers (rows × columns): too large", MaxFileEntries)}
		}
		return nil
	})
	return rows, cols, header, err
}

// isHeader reports whether a line holds names only, no number.
func isHeader(line []byte) bool {
	numbers, texts := 0, 0
	for f := range fieldsOf(line) {
		if _, err := parseNumber(f); err == nil {
			numbers++
		} else {
			texts++
		}
	}
	return texts > 0 && numbers == 0
}

// fieldsOf yields the comma-separated fields of a line, trimmed of spaces.
func fieldsOf(line []byte) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for {
			f, rest, more := bytes.Cut(line, []byte(","))
			if !yield(bytes.TrimSpace(f)) || !more {
				return
			}
			line = rest
		}
	}
}

// parseNumber reads a finite number; the error says what was found.
func parseNumber(b []byte) (float64, error) {
	if len(b) == 0 {
		return 0, errors.New("is empty, not a number")
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", clip(b))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", clip(b))
	}
	return v, nil
}

// clip shortens a token quoted in an error message.
func clip(b []byte) string {
	if len(b) > 24 {
		return string(b[:24]) + "…"
	}
	return string(b)
}

func stripComment(line []byte) []byte {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	return bytes.TrimSpace(line)
}

// eachLine calls fn for every line of r (without the line break, and
// without a UTF-8 byte-order mark at the start of the file), numbered from
// 1, and stops with the context's error when it is cancelled. A line longer
// than maxLine is an error.
func (rd *reader) eachLine(r io.Reader, name string, fn func(no int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	for no := 1; ; no++ {
		if no%checkEvery == 0 && rd.ctx.Err() != nil {
			return rd.ctx.Err()
		}
		line, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
				if len(long) > maxLine {
					return &FileError{name, no, fmt.Sprintf("line longer than %d bytes", maxLine)}
				}
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return &FileError{name, no, err.Error()}
		}
		if no == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(line) > 0 {
			if ferr := fn(no, bytes.TrimRight(line, "\r\n")); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// Classify turns numeric labels into class indices shared by all the given
// sets (training first, then test): classes are the distinct label values in
// increasing order, named by their shortest decimal form.
func Classify(sets ...*Set) {
	var vals []float64
	for _, s := range sets {
		vals = append(vals, s.Y...)
	}
	sort.Float64s(vals)
	vals = slices.Compact(vals)
	names := make([]string, len(vals))
	for k, v := range vals {
		names[k] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, s := range sets {
		for i, y := range s.Y {
			k, _ := slices.BinarySearch(vals, y)
			s.Y[i] = float64(k)
		}
		s.Classes, s.Names = len(vals), names
	}
}

// Distinct returns the number of distinct labels of the sets, counting at
// most limit+1 (enough to tell that there are more than limit).
func Distinct(limit int, sets ...*Set) int {
	seen := map[float64]bool{}
	for _, s := range sets {
		for _, y := range s.Y {
			if seen[y] = true; len(seen) > limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// MaxAutoClasses is the most distinct labels a file may have for Categorical
// to call it a classification task.
const MaxAutoClasses = 100

// Categorical reports whether labels look like classes: whole numbers with
// at most MaxAutoClasses distinct values.
func Categorical(sets ...*Set) bool {
	seen := map[float64]bool{}
	for _, s := range sets {
		for _, y := range s.Y {
			if y != math.Trunc(y) {
				return false
			}
			seen[y] = true
			if len(seen) > MaxAutoClasses {
				return false
			}
		}
	}
	return true
}

// PadTo widens s to d features (LIBSVM files of one data set may end at
// different largest indices); it never narrows.
func (s *Set) PadTo(d int) {
	if d <= s.Dim {
		return
	}
	x := make([]float64, s.N*d)
	for i := 0; i < s.N; i++ {
		copy(x[i*d:], s.Row(i))
	}
	s.X, s.Dim = x, d
}
