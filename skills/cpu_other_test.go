//go:build !unix

package skills

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
