package mixture

import "github.com/fedscope/fedscope/experiment"

// cfg reads a scenario's configuration back.
func cfg(sc experiment.Scenario) Config { return sc.Config.(Config) }
