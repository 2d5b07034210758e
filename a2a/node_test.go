package a2a

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// startNode runs an npm peer script from internal/npm and returns the port
// it printed ("LISTENING <port>"). The script exits when its stdin closes;
// the test's cleanup closes it and kills the process if needed.
func startNode(t testing.TB, script string, args ...string) string {
	t.Helper()
	needNode(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("npm peers not installed: run `make test` or `npm ci --prefix internal/npm`")
	}
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Dir = npmDir
	return testkit.StartListening(t, cmd)
}

// runNode runs a finite npm script and returns its stdout.
func runNode(t testing.TB, script string, args ...string) string {
	t.Helper()
	needNode(t)
	ctx := ctxT(t)
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = npmDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s\n%s", script, err, out, stderr.String())
	}
	return string(out)
}

// nodeAvailable reports whether node and the npm peers are installed.
func nodeAvailable() bool {
	if _, err := exec.LookPath("node"); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(npmDir, "node_modules", "@a2a-js", "sdk"))
	return err == nil
}
