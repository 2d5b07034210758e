package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	everything := filepath.Join("..", "..", "internal", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	npm := true
	if _, err := os.Stat(everything); err != nil {
		npm = false
	}
	tests := []struct {
		name    string
		args    []string
		needNPM bool
		want    []string
		wantErr string
	}{
		{name: "list and call", args: []string{"-call", "everything/echo", "-args", `{"message":"hi"}`}, needNPM: true,
			want: []string{"server everything (stdio): ready", "mcp__everything__echo", "Echo: hi"}},
		{name: "env from config", args: []string{"-call", "everything/get-env"}, needNPM: true,
			want: []string{"hello from .mcp.json"}},
		{name: "invalid config", args: []string{"-config", filepath.Join("testdata", "broken.json")},
			wantErr: `testdata/broken.json: server "broken": field "url": "ftp://example.com" must start with http:// or https://`},
		{name: "bad call flag", args: []string{"-call", "nope"}, needNPM: true, wantErr: "-call must be server/tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needNPM && !npm {
				t.Skip("npm peers not installed: run `make test` or `npm ci --prefix internal/npm`")
			}
			var out bytes.Buffer
			err := run(context.Background(), tt.args, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
