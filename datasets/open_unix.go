//go:build unix

package datasets

import (
	"os"
	"syscall"
)

// openNonblocking opens path for reading without waiting for a writer
// (O_NONBLOCK returns at once on a FIFO; on a regular file it changes
// nothing).
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
