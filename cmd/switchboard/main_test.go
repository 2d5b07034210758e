package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// The gateway binary is built on first use, once per package run.
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func gatewayBin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "switchboard-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "switchboard")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
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
	cmd := exec.Command(gatewayBin(t), append([]string{"mcp", "serve", "-listen", "127.0.0.1:0"}, args...)...)
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
		return u
	case <-time.After(60 * time.Second):
		t.Fatal("the gateway did not start listening")
	}
	return ""
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
