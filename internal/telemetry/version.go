package telemetry

import (
	"runtime/debug"
	"sync"
)

// Version is the instrumentation scope's version: the version of the
// Switchboard module the program was built with ("devel" when built from a
// checkout), read once from the build information.
var Version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if bi.Main.Path == ScopeName {
		return versionOr(bi.Main.Version)
	}
	for _, d := range bi.Deps {
		if d.Path == ScopeName {
			if d.Replace != nil {
				return versionOr(d.Replace.Version)
			}
			return versionOr(d.Version)
		}
	}
	return "devel"
})

func versionOr(v string) string {
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}
