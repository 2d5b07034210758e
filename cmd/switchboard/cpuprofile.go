//go:build sbprofile

package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

// A binary built with -tags sbprofile writes profiles of itself, for
// docs/performance.md's "Gateway against peers": given
// SWITCHBOARD_CPUPROFILE=path, it waits SWITCHBOARD_CPUPROFILE_DELAY
// seconds, profiles its CPU for SWITCHBOARD_CPUPROFILE_SECONDS to path,
// then writes its allocations to path.allocs, sampled every 4 KiB, or
// every SWITCHBOARD_MEMPROFILE_RATE bytes when that is set (0: the
// runtime's default of 512 KiB, for a CPU profile that is not inflated by
// the allocation sampling's stack walks, a tenth of the CPU at 4 KiB).
func init() {
	p := os.Getenv("SWITCHBOARD_CPUPROFILE")
	if p == "" {
		return
	}
	f, err := os.Create(p)
	if err != nil {
		return
	}
	secs, _ := strconv.Atoi(os.Getenv("SWITCHBOARD_CPUPROFILE_SECONDS"))
	delay, _ := strconv.Atoi(os.Getenv("SWITCHBOARD_CPUPROFILE_DELAY"))
	runtime.MemProfileRate = 4096
	if r, err := strconv.Atoi(os.Getenv("SWITCHBOARD_MEMPROFILE_RATE")); err == nil {
		if r > 0 {
			runtime.MemProfileRate = r
		} else {
			runtime.MemProfileRate = 512 << 10
		}
	}
	go func() {
		time.Sleep(time.Duration(delay) * time.Second)
		_ = pprof.StartCPUProfile(f)
		time.Sleep(time.Duration(secs) * time.Second)
		pprof.StopCPUProfile()
		f.Close()
		if h, err := os.Create(p + ".allocs"); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(h, 0)
			h.Close()
		}
	}()
}
