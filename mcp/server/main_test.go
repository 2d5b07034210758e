package server_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	if os.Getenv(envTaskChild) != "" {
		os.Exit(runTaskChild()) // a process of TestTaskSurvivesKill
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { testkit.RemoveBinaries(); os.Exit(code) }),
		// go-sdk's HTTP client keeps idle connections' goroutines.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
