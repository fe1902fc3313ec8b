//go:build !linux

package benchratio

import "time"

// threadCPU is unknown here.
func threadCPU() time.Duration { return -1 }
