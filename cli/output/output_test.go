//go:build unix

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
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// rows is what every test writes.
const rows = "algorithm,round\nFedAvg,1\n"

func writeRows(w io.Writer) error { _, err := io.WriteString(w, rows); return err }

// kindOf describes a path's file type as the tests assert it.
func kindOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st.Mode().Type()
}

func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

// noTemps checks that no temporary file is left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".fedscope-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func open(t *testing.T, path string, inputs ...string) (*Target, error) {
	t.Helper()
	return Open(context.Background(), path, Options{Stdout: io.Discard, Inputs: inputs})
}

func mustWrite(t *testing.T, path string) *Target {
	t.Helper()
	tg, err := open(t, path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	if err := tg.Write(writeRows); err != nil {
		t.Fatalf("Write(%q): %v", path, err)
	}
	return tg
}

func TestRegularFileKeepsItsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	os.WriteFile(path, []byte("old rows that are longer than the new ones\n"), 0o600)
	os.Chmod(path, 0o640)
	if tg := mustWrite(t, path); tg.Kind != Replace {
		t.Errorf("kind %v, want %v", tg.Kind, Replace)
	}
	st, _ := os.Stat(path)
	if kindOf(t, path) != 0 || st.Mode().Perm() != 0o640 || content(t, path) != rows {
		t.Errorf("after the write: type %v mode %v content %q; want a regular file, mode 0640, the rows", kindOf(t, path), st.Mode().Perm(), content(t, path))
	}
	noTemps(t, dir)
}

// TestMissingFileHonoursUmask checks that a new file gets 0666 less the
// umask (077 here: 0600), as every program's new file.
func TestMissingFileHonoursUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "new.csv")
	mustWrite(t, path)
	st, _ := os.Stat(path)
	if kindOf(t, path) != 0 || st.Mode().Perm() != 0o600 || content(t, path) != rows {
		t.Errorf("new file: type %v mode %v content %q; want a regular file, mode 0600, the rows", kindOf(t, path), st.Mode().Perm(), content(t, path))
	}
	noTemps(t, dir)
}

// TestCharacterDevice writes to a null device made with mknod in a
// temporary directory (never the real /dev/null): it must stay that
// device, not become a regular file.
func TestCharacterDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod of a character device needs root; skipped")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "null")
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
		t.Skipf("mknod of a null device failed (%v); skipped", err)
	}
	before, _ := os.Stat(path)
	if tg := mustWrite(t, path); tg.Kind != Direct {
		t.Errorf("kind %v, want %v", tg.Kind, Direct)
	}
	after, err := os.Stat(path)
	if err != nil || after.Mode()&fs.ModeCharDevice == 0 || rdev(after) != rdev(before) {
		t.Fatalf("after the write %s is %v (rdev %d), want the character device (rdev %d)", path, after.Mode(), rdev(after), rdev(before))
	}
	if c := content(t, path); c != "" {
		t.Errorf("reading the null device gave %q, want nothing", c)
	}
	noTemps(t, dir)
}

func mkdev(major, minor uint32) uint64 {
	return uint64(major)<<8 | uint64(minor&0xff) | uint64(minor&^0xff)<<12
}

func rdev(st fs.FileInfo) uint64 { return uint64(st.Sys().(*syscall.Stat_t).Rdev) }

// TestFIFO writes to a FIFO while a reader waits on it: the reader gets
// the rows and the FIFO stays a FIFO.
func TestFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path) // waits for the writer
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if tg := mustWrite(t, path); tg.Kind != Direct {
		t.Errorf("kind %v, want %v", tg.Kind, Direct)
	}
	if c := <-got; c != rows {
		t.Errorf("the reader got %q, want %q", c, rows)
	}
	if kindOf(t, path) != fs.ModeNamedPipe {
		t.Errorf("after the write %s is %v, want a FIFO", path, kindOf(t, path))
	}
	noTemps(t, dir)
}

// TestFIFOWithoutReaderIsCancellable checks that waiting for a FIFO's
// reader ends with the context (Ctrl-C before the run), and that what it
// returns writes nowhere and leaves the FIFO as it was.
func TestFIFOWithoutReaderIsCancellable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tg, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("Open of a FIFO without a reader on a cancelled context: %v", err)
	}
	tg.Abort()
	if kindOf(t, path) != fs.ModeNamedPipe {
		t.Errorf("%s is %v afterwards, want a FIFO", path, kindOf(t, path))
	}
}

// TestSymlink writes through a link: the target gets the rows, the link
// stays a link to it; a dangling link creates its target.
func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.csv")
	os.WriteFile(target, []byte("old\n"), 0o644)
	link := filepath.Join(dir, "link.csv")
	os.Symlink("target.csv", link)
	mustWrite(t, link)
	if kindOf(t, link) != fs.ModeSymlink || content(t, target) != rows {
		t.Errorf("link is %v, target holds %q; want a link and the rows", kindOf(t, link), content(t, target))
	}
	if dest, _ := os.Readlink(link); dest != "target.csv" {
		t.Errorf("the link points to %q now, want target.csv", dest)
	}
	dangling := filepath.Join(dir, "dangling.csv")
	os.Symlink("made.csv", dangling)
	mustWrite(t, dangling)
	if kindOf(t, dangling) != fs.ModeSymlink || content(t, filepath.Join(dir, "made.csv")) != rows {
		t.Error("a dangling link did not lead to its target being written")
	}
	noTemps(t, dir)
}

// TestHardLinkIsNotSplit rewrites a file with two names in place: both
// names still share one inode and both show the rows.
func TestHardLinkIsNotSplit(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	os.WriteFile(a, []byte("old rows, longer than the new ones\n"), 0o644)
	os.Link(a, b)
	if tg := mustWrite(t, a); tg.Kind != InPlace {
		t.Errorf("kind %v, want %v", tg.Kind, InPlace)
	}
	sa, _ := os.Stat(a)
	sb, _ := os.Stat(b)
	if !os.SameFile(sa, sb) || content(t, b) != rows || kindOf(t, a) != 0 {
		t.Errorf("after the write: same inode %v, other name holds %q; want one inode and the rows", os.SameFile(sa, sb), content(t, b))
	}
	noTemps(t, dir)
}

// TestInputFileIsRefused refuses a target that is a file of the run, by
// its name, through a symbolic link and through a hard link; the file is
// unchanged.
func TestInputFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.csv")
	os.WriteFile(data, []byte("1,2\n"), 0o644)
	sym, hard := filepath.Join(dir, "sym.csv"), filepath.Join(dir, "hard.csv")
	os.Symlink(data, sym)
	os.Link(data, hard)
	for _, path := range []string{data, sym, hard} {
		_, err := open(t, path, data)
		var ie *experiment.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "a file this run reads") {
			t.Errorf("--out %s with data=%s: err = %v, want an InputError naming the input", path, data, err)
		}
	}
	if content(t, data) != "1,2\n" || kindOf(t, data) != 0 || kindOf(t, sym) != fs.ModeSymlink {
		t.Error("the input file or its link changed")
	}
	noTemps(t, dir)
}

func TestMissingDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nodir", "x.csv")
	_, err := open(t, path)
	var ie *experiment.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("err = %v, want an InputError saying the directory does not exist", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the missing directory was created")
	}
}

func TestReadOnlyFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.csv")
	os.WriteFile(path, []byte("keep me\n"), 0o444)
	_, err := open(t, path)
	var ie *experiment.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("err = %v, want an InputError saying the file is read-only", err)
	}
	st, _ := os.Stat(path)
	if content(t, path) != "keep me\n" || st.Mode().Perm() != 0o444 || kindOf(t, path) != 0 {
		t.Errorf("the read-only file changed: mode %v content %q", st.Mode().Perm(), content(t, path))
	}
	noTemps(t, dir)
}

func TestDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	_, err := open(t, dir)
	var ie *experiment.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("err = %v, want an InputError saying it is a directory", err)
	}
	if kindOf(t, dir) != fs.ModeDir {
		t.Error("the directory is gone")
	}
	noTemps(t, dir)
}

func TestStdout(t *testing.T) {
	for _, path := range []string{"", "-"} {
		var buf bytes.Buffer
		tg, err := Open(context.Background(), path, Options{Stdout: &buf})
		if err != nil || tg.Kind != Stdout {
			t.Fatalf("Open(%q) = %v, %v; want standard output", path, tg, err)
		}
		tg.Write(writeRows)
		if buf.String() != rows {
			t.Errorf("Open(%q) wrote %q to standard output, want the rows", path, buf.String())
		}
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was created`)
	}
	var ie *experiment.InputError
	if _, err := Open(context.Background(), "-", Options{}); !errors.As(err, &ie) {
		t.Errorf(`Open("-") without a standard output: err = %v, want an InputError`, err)
	}
}

// TestDescriptor writes to /dev/fd/N of a pipe: directly, into the pipe.
func TestDescriptor(t *testing.T) {
	r, w := fdPipe(t)
	path := fmt.Sprintf("/dev/fd/%d", w.Fd())
	tg := mustWrite(t, path)
	w.Close()
	b, _ := io.ReadAll(r)
	if tg.Kind != Direct || string(b) != rows {
		t.Errorf("kind %v, the pipe got %q; want %v and the rows", tg.Kind, b, Direct)
	}
}

// TestSocket writes to a Unix socket: the listener gets the rows, the
// socket file stays.
func TestSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "fs") // short: socket paths are limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("cannot listen on a Unix socket: %v; skipped", err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	if tg := mustWrite(t, path); tg.Kind != Direct {
		t.Errorf("kind %v, want %v", tg.Kind, Direct)
	}
	if c := <-got; c != rows || kindOf(t, path) != fs.ModeSocket {
		t.Errorf("the listener got %q and the path is %v; want the rows and a socket", c, kindOf(t, path))
	}
}

// TestFailedWriteLeavesTargetAndRescues checks that a write that fails
// half-way leaves the old file whole and no temporary file, and that
// Rescue keeps the rows in a new file.
func TestFailedWriteLeavesTargetAndRescues(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	os.WriteFile(path, []byte("old\n"), 0o644)
	tg, err := open(t, path)
	if err != nil {
		t.Fatal(err)
	}
	failing := func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("disk full") }
	if err := tg.Write(failing); err == nil {
		t.Fatal("Write reported no error")
	}
	if content(t, path) != "old\n" {
		t.Errorf("the target holds %q after a failed write, want the old content", content(t, path))
	}
	noTemps(t, dir)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	where, err := Rescue(".csv", writeRows)
	if err != nil || content(t, where) != rows || !strings.HasPrefix(filepath.Base(where), "fedscope-rows") {
		t.Errorf("Rescue = %q, %v; want a fedscope-rows file holding the rows", where, err)
	}
}

// TestAbortLeavesNoTrace checks that giving a target up removes its
// temporary file and leaves a new path uncreated.
func TestAbortLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "never.csv")
	tg, err := open(t, path)
	if err != nil {
		t.Fatal(err)
	}
	tg.Abort()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Error("an aborted target was created")
	}
	noTemps(t, dir)
}

func TestFormatFor(t *testing.T) {
	for _, test := range []struct {
		flag, out string
		want      experiment.Format
		bad       bool
	}{
		{"", "", experiment.CSV, false},
		{"", "x.jsonl", experiment.JSONL, false},
		{"", "X.JSONL", experiment.JSONL, false},
		{"", "x.csv", experiment.CSV, false},
		{"", "x.txt", experiment.CSV, false},
		{"jsonl", "x.txt", experiment.JSONL, false},
		{"jsonl", "-", experiment.JSONL, false},
		{"csv", "x.csv", experiment.CSV, false},
		{"csv", "x.jsonl", 0, true},
		{"jsonl", "x.csv", 0, true},
		{"xml", "", 0, true},
	} {
		got, err := FormatFor(test.flag, test.out)
		var ie *experiment.InputError
		if test.bad != (err != nil) || (err != nil && !errors.As(err, &ie)) || (!test.bad && got != test.want) {
			t.Errorf("FormatFor(%q, %q) = %v, %v; want %v (bad: %v)", test.flag, test.out, got, err, test.want, test.bad)
		}
	}
}

// TestDescriptorLeftToItsOwner: a target on /dev/fd/N writes through a
// descriptor of its own, so that once the owner has closed N and the
// number went to another file, collecting the target closes nothing of
// that file.
func TestDescriptorLeftToItsOwner(t *testing.T) {
	_, w := fdPipe(t)
	fd := w.Fd()
	mustWrite(t, fmt.Sprintf("/dev/fd/%d", fd))
	w.Close()
	f, err := os.CreateTemp(t.TempDir(), "next")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Fd() != fd {
		t.Skipf("descriptor %d went to no new file (got %d)", fd, f.Fd())
	}
	for range 5 {
		runtime.GC() // runs the finalizers of what is no longer reachable
		runtime.Gosched()
	}
	if _, err := f.WriteString("still open\n"); err != nil {
		t.Errorf("the file that took descriptor %d was closed behind its back: %v", fd, err)
	}
}

// fdPipe returns a pipe for the /dev/fd tests (skipped where there is no
// /dev/fd); the read end is closed when the test ends, the write end is
// the test's to close.
func fdPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	if _, err := os.Stat("/dev/fd"); err != nil {
		t.Skip("no /dev/fd here; skipped")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, w
}
