package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// checks maps a scenario to how many times each check id passed and
// failed.
type checks map[string]map[string][2]int

// suite runs the official conformance suite's whole client side against
// driver and reads its checks.
func suite(t *testing.T, ctx context.Context, node, js, driver, out string, which ...string) (checks, string) {
	t.Helper()
	whole := len(which) == 0
	if whole {
		which = []string{"--suite", "all"}
	}
	cmd := exec.CommandContext(ctx, node, append([]string{js, "client", "--command", driver, "-o", out}, which...)...)
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 5 * time.Second
	b, _ := cmd.CombinedOutput() // the suite exits 1 when any check fails
	total := regexp.MustCompile(`Total: \d+ passed, \d+ failed`).FindString(string(b))
	if total == "" && whole {
		t.Fatalf("the suite printed no total for %s:\n%s", filepath.Base(driver), b)
	}
	files, err := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(out, "auth", "*", "checks.json"))
	files = append(files, more...)
	stamp := regexp.MustCompile(`-\d{4}-\d\d-\d\dT[\d-]+Z$`)
	res := checks{}
	for _, f := range files {
		rel, _ := filepath.Rel(out, filepath.Dir(f))
		name := stamp.ReplaceAllString(filepath.ToSlash(rel), "")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []struct{ ID, Status string }
		if err := json.Unmarshal(data, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m := map[string][2]int{}
		for _, c := range cs {
			n := m[c.ID]
			switch c.Status {
			case "SUCCESS":
				n[0]++
			case "FAILURE":
				n[1]++
			}
			m[c.ID] = n
		}
		res[name] = m
	}
	return res, total
}

// TestConformanceSuite runs the MCP conformance suite's client scenarios
// against this driver (through an mcp.Manager) and against go-sdk
// v1.8.0's own conformance client in the same run: every check go-sdk's
// client passes must pass here too, and the client_credentials scenarios
// (which go-sdk's client fails) must pass entirely.
func TestConformanceSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite")
	}
	node, js := testkit.Node22(t), testkit.Conformance(t)
	dir := t.TempDir()
	ours, theirs := filepath.Join(dir, "switchboard-client"), filepath.Join(dir, "gosdk-client")
	ctx, cancel := context.WithTimeout(context.Background(), 85*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	builds := map[string]string{ours: ".", theirs: "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"}
	errs := make(chan string, len(builds))
	for out, pkg := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b, err := exec.CommandContext(ctx, "go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
				errs <- pkg + ": " + err.Error() + "\n" + string(b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// One suite after the other: the suite runs its scenarios in
	// parallel, and a timing check (sse-retry's) suffers on a loaded machine.
	base, baseTotal := suite(t, ctx, node, js, theirs, filepath.Join(dir, "out-gosdk"))
	got, gotTotal := suite(t, ctx, node, js, ours, filepath.Join(dir, "out-ours"))
	t.Logf("switchboard: %s (%d distinct checks passed); go-sdk v1.8.0's client: %s (%d distinct checks passed)",
		gotTotal, distinct(got), baseTotal, distinct(base))
	if len(base) < 20 {
		t.Fatalf("go-sdk's run produced %d scenarios: the suite did not run", len(base))
	}
	// A check is compared by its id in its scenario: a client that
	// repeats a step (go-sdk runs the whole flow again for the initialize
	// that follows a refused server/discover) records it again.
	short := func(sc string) []string {
		var out []string
		for id, n := range base[sc] {
			switch g := got[sc][id]; {
			case n[0] > 0 && g[0] == 0:
				out = append(out, fmt.Sprintf("check %s passed with go-sdk's client, not here", id))
			case n[1] == 0 && g[1] > 0:
				out = append(out, fmt.Sprintf("check %s failed here, not with go-sdk's client", id))
			}
		}
		return out
	}

	for sc := range base {
		if len(short(sc)) == 0 {
			continue
		}
		// Once more alone, in case a timing check lost to the load.
		again, _ := suite(t, ctx, node, js, ours, filepath.Join(dir, "again-"+strings.ReplaceAll(sc, "/", "_")), "--scenario", sc)
		t.Logf("%s: rerun alone after %v", sc, short(sc))
		got[sc] = again[sc]
		for _, msg := range short(sc) {
			t.Errorf("%s: %s", sc, msg)
		}
	}
	for _, sc := range []string{"auth/client-credentials-basic", "auth/client-credentials-jwt"} {
		ids, ok := got[sc]
		if !ok {
			t.Errorf("%s did not run", sc)
			continue
		}
		passed := 0
		for id, n := range ids {
			passed += n[0]
			if n[1] > 0 {
				t.Errorf("%s: check %s failed %d times", sc, id, n[1])
			}
		}
		if passed == 0 || !strings.Contains(sc, "client-credentials") {
			t.Errorf("%s: no check passed", sc)
		}
	}
}

// distinct counts the checks (by scenario and id) that passed and never
// failed.
func distinct(c checks) (pass int) {
	for _, ids := range c {
		for _, n := range ids {
			if n[0] > 0 && n[1] == 0 {
				pass++
			}
		}
	}
	return pass
}
