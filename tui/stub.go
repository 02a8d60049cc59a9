package tui

import (
	"context"
	"io"

	"github.com/fedscope/fedscope/experiment"
)

func Run(ctx context.Context, cat *experiment.Catalog, eng *experiment.Engine, sc experiment.Scenario, out io.Writer) error {
	return nil
}
