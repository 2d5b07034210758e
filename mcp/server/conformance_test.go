package server_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// scenarioLine is one line of the suite's summary: "✓ name: 1 passed, 0 failed".
var scenarioLine = regexp.MustCompile(`^[✓✗] ([a-z0-9-]+): (\d+) passed, (\d+) failed`)

// conformanceRun is the suite's verdict on one server.
type conformanceRun struct {
	passed, failed int
	// ok lists the scenarios with no failed check (and at least one passed).
	ok map[string]bool
}

// runConformance runs `conformance server --url url --suite active` and
// parses its summary.
func runConformance(t *testing.T, url string) conformanceRun {
	t.Helper()
	return runSuite(t, url, "active")
}

// runSuite runs `conformance server --url url --suite suite` and parses
// its summary.
func runSuite(t *testing.T, url, suite string) conformanceRun {
	t.Helper()
	node, js := testkit.Node22(t), testkit.Conformance(t)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, js, "server", "--url", url, "--suite", suite, "-o", t.TempDir())
	out, _ := cmd.CombinedOutput() // exits 1 when a check fails; the summary says which
	run := conformanceRun{ok: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := scenarioLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		run.passed += p
		run.failed += f
		if p > 0 && f == 0 {
			run.ok[m[1]] = true
		}
	}
	if run.passed+run.failed == 0 {
		t.Fatalf("no conformance summary for %s:\n%s", url, out)
	}
	return run
}

// TestConformanceServer runs the official MCP conformance suite's server
// side against our server offering the reference features (reference_test.go)
// and against go-sdk's own conformance everything-server, in the same run:
// ours must pass every scenario go-sdk's passes.
func TestConformanceServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite twice")
	}
	testkit.Node22(t)
	testkit.Conformance(t)
	start := time.Now()

	url := serveHTTP(t, newReferenceServer(t), "/mcp")

	ref := startEverythingServer(t, true)
	theirs := runConformance(t, ref)
	ours := runConformance(t, url)
	t.Logf("conformance server --suite active: switchboard %d checks passed and %d failed (%d scenarios clean); go-sdk everything-server %d passed and %d failed (%d scenarios clean); %.1f s",
		ours.passed, ours.failed, len(ours.ok), theirs.passed, theirs.failed, len(theirs.ok), time.Since(start).Seconds())
	for name := range theirs.ok {
		if !ours.ok[name] {
			t.Errorf("scenario %s: go-sdk's server passes it, ours does not", name)
		}
	}
	if ours.passed < theirs.passed {
		t.Errorf("ours passes %d checks, go-sdk's %d", ours.passed, theirs.passed)
	}
	if d := time.Since(start); d > 90*time.Second {
		t.Errorf("the conformance runs took %v (budget 90 s)", d)
	}
}

// startEverythingServer builds go-sdk's conformance everything-server (from
// the module cache, at the go-sdk version go.mod pins) and starts it on a
// free loopback port, stateless (its default) or stateful.
func startEverythingServer(t *testing.T, stateless bool) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building go-sdk's everything-server: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "-http", addr, "-stateless="+strconv.FormatBool(stateless))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListening(t, addr)
	return "http://" + addr + "/"
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func waitListening(t testing.TB, addr string) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, "a listener on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// TestConformanceGateway runs the official suite's server side, --suite
// all, against go-sdk's conformance everything-server (stateful) directly
// and through a Server fronting it (Config.Servers, prefixing off), in the
// same run: the gateway must pass at least as many checks, and every
// scenario the server passes directly.
func TestConformanceGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite twice")
	}
	testkit.Node22(t)
	testkit.Conformance(t)
	start := time.Now()
	ref := startEverythingServer(t, false)

	ctx := context.Background()
	client := new(server.Client)
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "everything", Type: "http", URL: ref}},
		Elicitor: client.Elicitor(), Sampler: client.Sampler(), OnLog: client.Log, OnResourceUpdated: client.ResourceUpdated})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, server.Config{Servers: m, Prefix: server.PrefixOff, Client: client, Permissions: agent.AllowAll()})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, srv, "/mcp")

	direct := runSuite(t, ref, "all")
	gateway := runSuite(t, url, "all")
	t.Logf("conformance server --suite all, go-sdk everything-server (stateful): directly %d checks passed and %d failed (%d scenarios clean); through the gateway %d passed and %d failed (%d scenarios clean); %.1f s",
		direct.passed, direct.failed, len(direct.ok), gateway.passed, gateway.failed, len(gateway.ok), time.Since(start).Seconds())
	// A scenario that fails through the gateway is run again once: go-sdk's
	// client hands a server's notifications to their handler on a goroutine
	// of their own while the call's response goes straight to the caller,
	// so under load a log message sent just before a tool's result can be
	// handled after it (tools-call-with-logging; docs/gateway.md). A
	// scenario must pass through the gateway in one of the two runs.
	var missing []string
	for name := range direct.ok {
		if !gateway.ok[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 || gateway.passed < direct.passed {
		again := runSuite(t, url, "all")
		t.Logf("through the gateway again (%v failed the first time): %d passed and %d failed", missing, again.passed, again.failed)
		for name := range again.ok {
			gateway.ok[name] = true
		}
		gateway.passed = max(gateway.passed, again.passed)
	}
	for name := range direct.ok {
		if !gateway.ok[name] {
			t.Errorf("scenario %s: the server passes it directly, not through the gateway", name)
		}
	}
	if gateway.passed < direct.passed {
		t.Errorf("through the gateway %d checks pass, directly %d", gateway.passed, direct.passed)
	}
}
