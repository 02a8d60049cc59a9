// Package output writes the rows of a headless run (and of the explorer's
// export) to where --out points, without destroying what is there
// (issue 13). The target is examined and opened before the run starts, so
// that a bad path costs nothing; then:
//
//   - "-" is standard output;
//   - a regular file, or a path that does not exist yet, is written to a
//     temporary file beside it that is renamed over it at the end (an
//     existing file is never half-overwritten): an existing file keeps its
//     mode, a new one gets the mode the umask allows; a file with other hard
//     links is rewritten in place instead, so that every link sees the rows;
//   - a symbolic link is followed: its target is written, the link stays;
//   - anything else — a character device, a FIFO, a socket, /dev/fd/N — is
//     written directly and never renamed or removed;
//   - a directory, a missing or unwritable directory, a read-only file, and
//     a file the run reads (its data files, through links and hard links
//     too) are refused with an *experiment.InputError (exit status 2).
//
// If writing fails after the run, Rescue keeps the rows in a new file and
// says where.
package output

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fedscope/fedscope/experiment"
)

// Kind is what a target is, and so how it is written.
type Kind int

// Kinds of target.
const (
	Stdout  Kind = iota // "-": the writer given in Options.Stdout
	Replace             // a regular or new file: written beside it, then renamed over it
	InPlace             // a regular file with other hard links: rewritten in place
	Direct              // a device, a FIFO, a socket, /dev/fd/N: written directly
)

func (k Kind) String() string {
	return [...]string{"standard output", "file", "file with other hard links", "special file"}[k]
}

// Options are what Open needs besides the path.
type Options struct {
	// Stdout receives the rows for the path "-" (and an empty path); nil
	// refuses those paths (the explorer, whose standard output is the
	// screen).
	Stdout io.Writer
	// Inputs are the files the run reads: a target that is one of them is
	// refused.
	Inputs []string
}

// Target is an --out destination, examined and opened before the run.
// Write it once with Write, or give it up with Abort.
type Target struct {
	Path string // as given
	Real string // after following symbolic links
	Kind Kind

	stdout io.Writer
	tmp    *os.File       // Replace and InPlace: the temporary file beside Real
	direct io.WriteCloser // Direct: the opened device, FIFO, socket or descriptor
	keep   bool           // Direct: a descriptor fedscope does not own (/dev/fd/N): not closed
	done   bool

	// Stop's side: Write passes the rows on in whole lines (lineWriter),
	// holding mu while it hands a chunk to the target and while it puts a
	// file in place; Stop ends it between two lines.
	mu        sync.Mutex
	stopped   atomic.Bool
	lines     atomic.Int64 // whole lines the target has received
	whole     atomic.Bool  // every line was handed to the target
	begun     bool         // Write has begun (mu)
	committed bool         // the file is in place, or given up (mu)
}

// ErrStopped is Write's error when Stop ended it: the target holds the
// whole lines written before (Lines), a file among them put in place.
var ErrStopped = errors.New("output: stopped between two lines")

// Chunk sizes of lineWriter: at most PipeChunk bytes per write to standard
// output and special files, which may be pipes: on Linux a write of up to
// 4096 bytes (PIPE_BUF) to a pipe is all or nothing, so a reader that
// stops reading leaves fedscope blocked between two lines, never inside
// one (a longer line goes in one write of its own). Temporary files take
// larger chunks.
const (
	PipeChunk = 4096
	fileChunk = 64 << 10
)

// Open examines path and prepares to write it (see the package comment for
// what each kind of path means). It waits for a reader on a FIFO (ctx ends
// the wait). Its errors are *experiment.InputError.
func Open(ctx context.Context, path string, opt Options) (*Target, error) {
	bad := func(format string, args ...any) error {
		return &experiment.InputError{Msg: fmt.Sprintf("--out %q: ", path) + fmt.Sprintf(format, args...)}
	}
	if path == "" || path == "-" {
		if opt.Stdout == nil { // the explorer: standard output is the screen
			return nil, bad("standard output is not available here; give a file name")
		}
		return &Target{Path: path, Kind: Stdout, stdout: opt.Stdout}, nil
	}
	if fd, ok := descriptor(path); ok {
		return openDescriptor(path, fd, bad)
	}
	real, err := resolve(path)
	if err != nil {
		return nil, bad("%v", cause(err))
	}
	if fd, ok := descriptor(real); ok { // a link to /dev/stdout
		return openDescriptor(path, fd, bad)
	}
	t := &Target{Path: path, Real: real}
	st, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return t.create(bad)
	case err != nil:
		return nil, bad("%v", cause(err))
	}
	for _, in := range opt.Inputs {
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			return nil, bad("is %q, a file this run reads; choose another name", in)
		}
	}
	m := st.Mode()
	switch {
	case m.IsDir():
		return nil, bad("is a directory; give a file name")
	case m.IsRegular():
		if m.Perm()&0o222 == 0 {
			return nil, bad("is read-only (mode %04o); fedscope does not replace it", m.Perm())
		}
		if err := writable(real); err != nil {
			return nil, bad("cannot be written: %v", cause(err))
		}
		t.Kind = Replace
		if links(st) > 1 {
			t.Kind = InPlace
		}
		if err := t.temp(st); err != nil {
			return nil, bad("%v", err)
		}
		return t, nil
	}
	t.Kind = Direct
	if err := t.openDirect(ctx, m); err != nil {
		return nil, bad("%v", err)
	}
	return t, nil
}

// descriptorPath matches the paths of the process's own descriptors.
var descriptorPath = regexp.MustCompile(`^/(?:dev/fd|proc/self/fd|proc/` + strconv.Itoa(os.Getpid()) + `/fd)/([0-9]+)$`)

// descriptor reports whether path names one of the process's descriptors
// (/dev/fd/N, /proc/self/fd/N, /dev/stdout …), and which.
func descriptor(path string) (int, bool) {
	p := filepath.Clean(path)
	switch p {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	m := descriptorPath.FindStringSubmatch(p)
	if m == nil {
		return 0, false
	}
	fd, err := strconv.Atoi(m[1])
	return fd, err == nil
}

// openDescriptor writes to an inherited descriptor directly: it shares the
// shell's file offset, so `--out /dev/fd/3 3>>log` appends.
//
// It writes through a duplicate of the descriptor, which it closes when
// done: an *os.File made on the inherited number itself would close that
// number when collected, maybe long after its owner closed it and the
// number went to another file.
func openDescriptor(path string, fd int, bad func(string, ...any) error) (*Target, error) {
	own, owned, err := duplicate(fd)
	if err != nil {
		return nil, bad("descriptor %d is not open", fd)
	}
	f := os.NewFile(uintptr(own), path)
	if f == nil {
		return nil, bad("no such open file descriptor")
	}
	if _, err := f.Stat(); err != nil {
		if owned {
			f.Close()
		}
		return nil, bad("descriptor %d is not open", fd)
	}
	return &Target{Path: path, Real: path, Kind: Direct, direct: f, keep: !owned}, nil
}

// resolve follows symbolic links to the file they finally name, which may
// not exist yet (a link to a new file). Directories on the way are left to
// the kernel.
func resolve(path string) (string, error) {
	p := path
	for range 40 {
		if _, ok := descriptor(p); ok {
			return p, nil
		}
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && st.Mode()&fs.ModeSymlink == 0) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return "", errors.New("too many levels of symbolic links")
}

// create prepares a file that does not exist yet.
func (t *Target) create(bad func(string, ...any) error) (*Target, error) {
	dir := filepath.Dir(t.Real)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, bad("directory %q does not exist", dir)
	case err != nil:
		return nil, bad("%v", cause(err))
	case !st.IsDir():
		return nil, bad("%q is not a directory", dir)
	}
	t.Kind = Replace
	if err := t.temp(nil); err != nil {
		return nil, bad("%v", err)
	}
	return t, nil
}

// temp creates the temporary file beside Real. A new file is created with
// mode 0666, which the kernel reduces by the umask, as any program's new
// file; for an existing file the temporary takes its mode (and, for root,
// its owner), so the rename changes neither.
func (t *Target) temp(existing fs.FileInfo) error {
	dir, base := filepath.Split(t.Real)
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	var f *os.File
	var err error
	for i := range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.fedscope-%d-%d.tmp", base, os.Getpid(), i))
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("cannot write in directory %q: %v", dir, cause(err))
	}
	lockTemp(f) // tells a live temporary file from one a killed fedscope left
	if existing != nil {
		if err := f.Chmod(existing.Mode().Perm()); err != nil {
			f.Close()
			os.Remove(f.Name())
			return fmt.Errorf("cannot keep the mode of the file: %v", cause(err))
		}
		keepOwner(f, existing)
	}
	t.tmp = f
	pending.add(f.Name())
	return nil
}

// tempPID reads the name of a temporary file of a target named base,
// ".BASE.fedscope-PID-N" (".tmp" at the end since issue 22), and returns
// the process that made it. Plain string work, not a regular expression:
// a file name need not be UTF-8, which a pattern built from it must be.
func tempPID(name, base string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "."+base+".fedscope-")
	if !ok {
		return 0, false
	}
	rest = strings.TrimSuffix(rest, ".tmp")
	pid, n, ok := strings.Cut(rest, "-")
	if !ok || !digits(pid) || !digits(n) {
		return 0, false
	}
	v, err := strconv.Atoi(pid)
	return v, err == nil
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// removeStale removes the temporary files that a fedscope killed while
// writing this target left beside it (issue 22: SIGKILL, a crash or a
// power loss leave .NAME.fedscope-PID-N.tmp, which no one removed): those
// whose process is gone and which no process holds locked (isStale), so
// that a live fedscope's file, here or on another machine sharing the
// directory, is never touched.
func removeStale(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := tempPID(e.Name(), base)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !pending.has(path) && isStale(path, pid) {
			os.Remove(path)
		}
	}
}

// openDirect opens a device, a FIFO or a socket for writing.
func (t *Target) openDirect(ctx context.Context, m fs.FileMode) error {
	var err error
	switch {
	case m&fs.ModeSocket != 0:
		t.direct, err = net.Dial("unix", t.Real)
	case m&fs.ModeNamedPipe != 0:
		t.direct, err = openFIFO(ctx, t.Real)
	default:
		t.direct, err = os.OpenFile(t.Real, os.O_WRONLY, 0)
	}
	if err != nil {
		return cause(err)
	}
	return nil
}

// Write writes the rows with write, then puts them in place: renames the
// temporary file over the target (Replace), copies it into the target
// (InPlace), or closes the special file. The target receives whole lines
// only, in chunks of whole lines (see PipeChunk), and the count is kept
// (Lines). On failure the target is as it was (Replace) and the temporary
// file is gone; the caller keeps the rows with Rescue. When Stop ends the
// write, Write returns ErrStopped: the lines written so far are in place.
func (t *Target) Write(write func(io.Writer) error) error {
	t.mu.Lock()
	if t.stopped.Load() && t.committed { // stopped before it began
		t.mu.Unlock()
		return ErrStopped
	}
	if t.done {
		t.mu.Unlock()
		return errors.New("output: target written twice")
	}
	t.done, t.begun = true, true
	t.mu.Unlock()
	lw := &lineWriter{t: t, chunk: PipeChunk}
	switch t.Kind {
	case Stdout:
		lw.w = t.stdout
	case Direct:
		lw.w = t.direct
	default:
		lw.w, lw.chunk = t.tmp, fileChunk
	}
	err := write(lw)
	if err == nil {
		err = lw.flush()
	}
	if err == nil {
		t.whole.Store(true)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.committed && t.whole.Load(): // Stop put every line in place
		return nil
	case t.committed: // Stop put the lines so far in place
		return ErrStopped
	case t.stopped.Load() && !t.whole.Load():
		t.commit(true)
		return ErrStopped
	}
	t.committed = true
	switch t.Kind {
	case Stdout:
		return err
	case Direct:
		if !t.keep {
			if cerr := t.direct.Close(); err == nil {
				err = cerr
			}
		}
		return err
	}
	defer t.removeTemp()
	if err != nil {
		return err
	}
	return t.putInPlace(true)
}

// putInPlace renames the temporary file over the target, or copies it into
// a target with other hard links. sync first flushes it to the disk, so
// that a crash of the machine cannot leave an empty file under the name;
// Stop, which must return within the deadline of a signal, skips that
// (the lines are in the page cache, which every reader sees at once).
func (t *Target) putInPlace(sync bool) error {
	if sync {
		if err := t.tmp.Sync(); err != nil {
			return err
		}
	}
	if t.Kind == InPlace {
		return t.copyInPlace()
	}
	if err := t.tmp.Close(); err != nil {
		return err
	}
	return os.Rename(t.tmp.Name(), t.Real)
}

// Stop ends a Write under way (from another goroutine) between two lines:
// what the target received so far is kept, a file with those lines put in
// place, and Write returns ErrStopped (nil when every line was already
// handed over). It returns at once, with the number of whole lines
// written and whether they are all of them, even when the Write is blocked
// on a pipe whose reader stopped reading (that Write never returns; what
// the pipe received is whole lines). A target whose Write has not begun is
// left as it was, and its Write will write nothing.
func (t *Target) Stop() (lines int64, all bool) {
	t.stopped.Store(true)
	if t.Kind == Replace || t.Kind == InPlace {
		// A file: waits for the chunk in flight, then puts the lines in place.
		t.mu.Lock()
		if !t.committed {
			t.commit(t.begun)
		}
		t.mu.Unlock()
	}
	return t.lines.Load(), t.whole.Load()
}

// commit ends a stopped target; t.mu is held. A begun file gets the lines
// written so far; one without any line stays as it was.
func (t *Target) commit(begun bool) {
	t.committed, t.done = true, true
	if t.direct != nil && !t.keep {
		t.direct.Close()
	}
	if t.tmp == nil {
		return
	}
	if !begun || t.lines.Load() == 0 || t.putInPlace(false) != nil {
		t.lines.Store(0) // the file is as it was
	}
	t.removeTemp()
}

// Lines returns the number of whole lines the target has received.
func (t *Target) Lines() int64 { return t.lines.Load() }

// lineWriter passes what it is given on to the target in whole lines,
// chunk bytes at most per write (a longer line alone), counting them;
// once the target is stopped it passes nothing more and fails with
// ErrStopped.
type lineWriter struct {
	t     *Target
	w     io.Writer
	chunk int
	buf   []byte // what has not been passed on: whole lines and a partial one
}

func (lw *lineWriter) Write(p []byte) (int, error) {
	if lw.t.stopped.Load() {
		return 0, ErrStopped
	}
	lw.buf = append(lw.buf, p...)
	for len(lw.buf) >= lw.chunk {
		end := bytes.LastIndexByte(lw.buf[:lw.chunk], '\n') + 1
		if end == 0 { // a line longer than a chunk: alone
			end = bytes.IndexByte(lw.buf, '\n') + 1
			if end == 0 {
				break // not complete yet
			}
		}
		if err := lw.pass(end); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// flush passes on the rest: its whole lines, then a last line without
// a newline, if any.
func (lw *lineWriter) flush() error {
	for len(lw.buf) > 0 {
		end := bytes.LastIndexByte(lw.buf[:min(lw.chunk, len(lw.buf))], '\n') + 1
		if end == 0 {
			if end = bytes.IndexByte(lw.buf, '\n') + 1; end == 0 {
				end = len(lw.buf)
			}
		}
		if err := lw.pass(end); err != nil {
			return err
		}
	}
	return nil
}

// pass writes buf[:n], whole lines, to the target.
func (lw *lineWriter) pass(n int) error {
	t := lw.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() || t.committed {
		return ErrStopped
	}
	chunk := lw.buf[:n]
	m, err := lw.w.Write(chunk)
	t.lines.Add(int64(bytes.Count(chunk[:m], []byte{'\n'})))
	lw.buf = lw.buf[:copy(lw.buf, lw.buf[n:])]
	return err
}

// copyInPlace copies the complete temporary file into the target, keeping
// its inode and so its other hard links.
func (t *Target) copyInPlace() error {
	if _, err := t.tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	dst, err := os.OpenFile(t.Real, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, t.tmp); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// Abort gives the target up unwritten: the temporary file is removed, a
// special file closed; the target is untouched.
func (t *Target) Abort() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.done, t.committed = true, true
	if t.direct != nil && !t.keep {
		t.direct.Close()
	}
	t.removeTemp()
}

func (t *Target) removeTemp() {
	if t.tmp != nil {
		t.tmp.Close()
		os.Remove(t.tmp.Name())
		pending.remove(t.tmp.Name())
	}
}

// Describe says where the rows went, for a message: the path, and the
// file a symbolic link led to.
func (t *Target) Describe() string {
	switch {
	case t.Kind == Stdout:
		return "standard output"
	case t.Real != "" && t.Real != t.Path:
		return fmt.Sprintf("%q (→ %q)", t.Path, t.Real)
	}
	return strconv.Quote(t.Path)
}

// Rescue keeps rows that could not be written to their target: in a new
// file fedscope-rows<ext> (or fedscope-rows-2<ext>, …) in the working
// directory, or in the temporary directory when that fails. It returns the
// path it wrote.
func Rescue(ext string, write func(io.Writer) error) (string, error) {
	var firstErr error
	for _, dir := range []string{".", os.TempDir()} {
		path, err := experiment.ExportNew(filepath.Join(dir, "fedscope-rows"), ext, write)
		if err == nil {
			return path, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return "", firstErr
}

// Export is Open, then Write, then Rescue on failure, for the explorer's
// export: it returns where the rows are. An *experiment.InputError means
// nothing was written (a bad path); any other error comes with the rescue
// file's path when the rescue succeeded.
func Export(ctx context.Context, path string, opt Options, ext string, write func(io.Writer) error) (string, error) {
	t, err := Open(ctx, path, opt)
	if err != nil {
		return "", err
	}
	if err := t.Write(write); err != nil {
		where, rerr := Rescue(ext, write)
		if rerr != nil {
			return "", fmt.Errorf("--out %q: %v; the rows could not be kept either: %v", path, err, rerr)
		}
		return where, fmt.Errorf("--out %q: %v; the rows are in %s instead", path, err, where)
	}
	return t.Describe(), nil
}

// RemoveTemps removes the temporary files of targets not yet written: the
// command line calls it when a second signal ends fedscope at once.
func RemoveTemps() { pending.clear() }

// pending is the set of temporary files that exist right now.
var pending = &tempSet{names: map[string]bool{}}

type tempSet struct {
	mu    sync.Mutex
	names map[string]bool
}

func (s *tempSet) add(name string)    { s.mu.Lock(); s.names[name] = true; s.mu.Unlock() }
func (s *tempSet) remove(name string) { s.mu.Lock(); delete(s.names, name); s.mu.Unlock() }
func (s *tempSet) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}
func (s *tempSet) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.names {
		os.Remove(name)
		delete(s.names, name)
	}
}

// cause strips the operation and path a *fs.PathError repeats (the
// message names the path already).
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// FormatFor returns the format of the rows: --format when given (flag
// non-empty), otherwise from the extension of --out (.csv, .jsonl), else
// CSV. A --format that contradicts the extension is an *InputError.
func FormatFor(flag, out string) (experiment.Format, error) {
	fromExt, known := experiment.CSV, false
	switch strings.ToLower(filepath.Ext(out)) {
	case ".csv":
		known = true
	case ".jsonl":
		fromExt, known = experiment.JSONL, true
	}
	if flag == "" {
		return fromExt, nil
	}
	f, err := experiment.ParseFormat(flag)
	if err != nil {
		return 0, err
	}
	if known && f != fromExt {
		return 0, experiment.Errorf("--format %s contradicts --out %q (a %s file); drop --format or change the extension",
			flag, out, strings.ToLower(filepath.Ext(out)))
	}
	return f, nil
}

// Ext is the file extension of a format, for rescue files.
func Ext(f experiment.Format) string {
	if f == experiment.JSONL {
		return ".jsonl"
	}
	return ".csv"
}
