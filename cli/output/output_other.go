//go:build !unix

package output

import (
	"context"
	"io/fs"
	"os"
)

func links(fs.FileInfo) uint64 { return 1 }

func writable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

func keepOwner(*os.File, fs.FileInfo) {}

func openFIFO(ctx context.Context, path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY, 0)
}

// duplicate gives fd itself where descriptors cannot be duplicated here:
// the target then leaves it open.
func duplicate(fd int) (int, bool, error) { return fd, false, nil }

func lockTemp(*os.File) {}

// isStale never removes a file where fedscope cannot tell a live writer's.
func isStale(string, int) bool { return false }
