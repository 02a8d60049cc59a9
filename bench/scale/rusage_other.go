//go:build !unix

package main

import "time"

// cpu and peakRSS are not measured on this system.
func cpu() time.Duration { return 0 }

func peakRSS() int64 { return 0 }
