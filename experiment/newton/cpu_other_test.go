//go:build !unix

package newton

import "time"

func cpuTime() time.Duration { return 0 }
