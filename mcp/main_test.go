package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/failure"
)

// The fault-test server is built on first use, once per package run (not
// in TestMain, which fuzz workers run too).
var (
	buildOnce     sync.Once
	testServerDir string
	testServerBin string
	buildErr      error
)

func testServerPath() string {
	buildOnce.Do(func() {
		testServerDir, buildErr = os.MkdirTemp("", "mcp-testserver-")
		if buildErr != nil {
			return
		}
		testServerBin = filepath.Join(testServerDir, "testserver")
		if runtime.GOOS == "windows" {
			testServerBin += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", testServerBin, "./internal/testserver").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building the test server: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		panic(buildErr)
	}
	return testServerBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
		if left := leftoverProcesses(testServerDir); len(left) > 0 {
			fmt.Fprintln(os.Stderr, "leftover processes:", left)
			code = 1
		}
	}
	if testServerDir != "" {
		_ = os.RemoveAll(testServerDir)
	}
	os.Exit(code)
}

// leftoverProcesses lists our children (zombies included) and any process
// still running a binary from dir.
func leftoverProcesses(dir string) []string {
	var out []string
	deadline := time.Now().Add(3 * time.Second)
	for {
		out = out[:0]
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			stat, err := os.ReadFile(filepath.Join(p, "stat"))
			if err != nil {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
			s := string(stat)
			fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
			if len(fields) < 2 {
				continue
			}
			ppid, _ := strconv.Atoi(fields[1])
			cmd := strings.ReplaceAll(string(cmdline), "\x00", " ")
			if ppid == os.Getpid() || dir != "" && strings.Contains(cmd, dir) {
				out = append(out, fmt.Sprintf("%s state=%s %s", filepath.Base(p), fields[0], cmd))
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testServer returns the config of a fault-test server in mode.
func testServer(name, mode string, env map[string]string) ServerConfig {
	e := map[string]string{"TESTSERVER_MODE": mode}
	for k, v := range env {
		e[k] = v
	}
	return ServerConfig{Name: name, Command: testServerPath(), Env: e}
}

// quickConfig is a manager config with short timeouts for tests.
func quickConfig(servers ...ServerConfig) Config {
	return Config{Servers: servers, StartupTimeout: 10 * time.Second, DiscoveryTimeout: 3 * time.Second,
		ShutdownGrace: 500 * time.Millisecond, RestartBackoff: 50 * time.Millisecond, MaxRestartBackoff: 500 * time.Millisecond,
		Policy: failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1, BreakerFailures: 1000})}
}

func newManager(t testing.TB, cfg Config) *Manager {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// npmDir returns the npm peers' node_modules or skips the test.
func npmDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "internal", "npm", "node_modules"))
	if err == nil {
		if _, err = os.Stat(filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")); err == nil {
			if _, err = exec.LookPath("node"); err == nil {
				return dir
			}
		}
	}
	t.Skip("npm peers not installed: run `make test` or `npm ci --prefix internal/npm`")
	return ""
}
