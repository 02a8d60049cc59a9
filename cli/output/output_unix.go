//go:build unix

package output

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// links returns the number of hard links of a file.
func links(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

// writable checks that the process may write the file (root may write a
// file without write bits; Open refuses those before asking).
func writable(path string) error {
	return syscall.Access(path, 2) // W_OK
}

// keepOwner gives the temporary file the owner and group of the file it
// will replace, when the process may (as root).
func keepOwner(f *os.File, st fs.FileInfo) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		f.Chown(int(s.Uid), int(s.Gid))
	}
}

// openFIFO opens a FIFO for writing, which waits until a reader opens it.
// When ctx ends first, the wait is ended by opening the FIFO for reading
// ourselves; the writing end is then returned all the same (nothing will
// be written to it: the run sees the cancelled context), so that a reader
// that came at the same moment is not mistaken for none.
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		ch <- result{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-ctx.Done():
	}
	rd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, ctx.Err() // the open cannot be ended; it is left behind
	}
	defer rd.Close()
	r := <-ch
	return r.f, r.err
}

// duplicate returns a descriptor of the process's own for the open file of
// fd (owned: to be closed by whoever took it), close-on-exec.
func duplicate(fd int) (own int, owned bool, err error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if own, err = syscall.Dup(fd); err != nil {
		return 0, false, err
	}
	syscall.CloseOnExec(own)
	return own, true, nil
}

// lockTemp holds a lock on a temporary file for as long as the process
// lives (the kernel releases it when the process ends, however it ends).
// A file system without locks leaves it unlocked: isStale then never
// removes it.
func lockTemp(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// isStale reports whether a temporary file made by process pid was left by
// a fedscope that is gone: no such process here, and the file not locked
// (a live fedscope on another machine sharing the directory holds its
// lock, if the file system has locks; without them nothing is removed).
func isStale(path string, pid int) bool {
	if pid != os.Getpid() {
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return false // that process lives
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close() // releases the test lock
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
