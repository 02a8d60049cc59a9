// Package tui is the Bubble Tea program of fedscope.
package tui

import (
	"context"
	"io"
)

// Main opens the explorer.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int { return 0 }
