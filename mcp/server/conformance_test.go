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

	"github.com/switchboard-dev/switchboard/internal/testkit"
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
	node, suite := testkit.Node22(t), testkit.Conformance(t)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--suite", "active", "-o", t.TempDir())
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

	ref := startEverythingServer(t)
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
// free loopback port with its defaults (stateless Streamable HTTP).
func startEverythingServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building go-sdk's everything-server: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "-http", addr)
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
