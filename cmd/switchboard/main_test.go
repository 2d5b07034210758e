package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { testkit.RemoveBinaries(); os.Exit(code) }),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// gatewayBin is the gateway binary, built on first use, once per package
// run.
func gatewayBin(t testing.TB) string {
	t.Helper()
	return testkit.GoBinary(t, ".")
}

// gatewayEnv is the environment the testdata .mcp.json files expand.
func gatewayEnv(t testing.TB) []string {
	nm := testkit.NodeModules(t)
	return append(os.Environ(), "SB_NODE="+testkit.Node22(t), "SB_NODE_MODULES="+nm, "SB_NPM="+filepath.Dir(nm))
}

// startHTTP starts the gateway with -listen 127.0.0.1:0 and returns its
// endpoint URL, read from its log line.
func startHTTP(t testing.TB, env []string, args ...string) string {
	t.Helper()
	url, _ := startHTTPCmd(t, gatewayBin(t), env, append([]string{"-prefix", "on"}, args...)...)
	return url
}

// startHTTPCmd starts bin's `mcp serve -listen 127.0.0.1:0` with args and
// returns its endpoint URL, read from its log line, and its process.
func startHTTPCmd(t testing.TB, bin string, env []string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "serve", "-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			var line struct {
				Addr, Path, Message string
			}
			if !sent && json.Unmarshal(sc.Bytes(), &line) == nil && line.Addr != "" {
				addr <- "http://" + line.Addr + line.Path
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-addr:
		return u, cmd
	case <-time.After(60 * time.Second):
		t.Fatal("the gateway did not start listening")
	}
	return "", nil
}

// ctx is a test-bounded context.
func ctx(t testing.TB, d time.Duration) context.Context { return testkit.Ctx(t, d) }

func contains2(xs []string, x string) bool {
	for _, v := range xs {
		if strings.EqualFold(v, x) {
			return true
		}
	}
	return false
}
