package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// filesServer is the demo's MCP server, written with the official Go SDK:
// file tools confined to one folder (through os.Root, so no path can leave
// it) and a long-running tool that reports progress.
type filesServer struct {
	root *os.Root
	step time.Duration
}

type pathArgs struct {
	Path string `json:"path" jsonschema:"path relative to the workspace folder"`
}

type writeArgs struct {
	Path    string `json:"path" jsonschema:"path relative to the workspace folder"`
	Content string `json:"content" jsonschema:"the full text to write"`
}

type indexArgs struct {
	Dir string `json:"dir,omitempty" jsonschema:"folder to index (default: the whole workspace)"`
}

func textResult(format string, args ...any) *gomcp.CallToolResult {
	return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func errorResult(err error) *gomcp.CallToolResult {
	r := textResult("%v", err)
	r.IsError = true
	return r
}

// newFilesServer returns an MCP server over the folder dir.
func newFilesServer(dir string, step time.Duration) (*gomcp.Server, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	fsrv := &filesServer{root: root, step: step}
	s := gomcp.NewServer(&gomcp.Implementation{Name: "demo-files", Version: "1.0.0"}, nil)
	readOnly := &gomcp.ToolAnnotations{ReadOnlyHint: true}
	gomcp.AddTool(s, &gomcp.Tool{Name: "read_file", Description: "Read a text file of the workspace.", Annotations: readOnly}, fsrv.read)
	gomcp.AddTool(s, &gomcp.Tool{Name: "list_directory", Description: "List a folder of the workspace.", Annotations: readOnly}, fsrv.list)
	destructive := true
	gomcp.AddTool(s, &gomcp.Tool{Name: "write_file", Description: "Create or overwrite a text file of the workspace.",
		Annotations: &gomcp.ToolAnnotations{DestructiveHint: &destructive}}, fsrv.write)
	gomcp.AddTool(s, &gomcp.Tool{Name: "index_files", Description: "Index the workspace for search (slow; reports progress).", Annotations: readOnly}, fsrv.index)
	return s, nil
}

func (f *filesServer) read(_ context.Context, _ *gomcp.CallToolRequest, in pathArgs) (*gomcp.CallToolResult, any, error) {
	b, err := f.root.ReadFile(in.Path)
	if err != nil {
		return errorResult(err), nil, nil
	}
	return textResult("%s", b), nil, nil
}

func (f *filesServer) list(_ context.Context, _ *gomcp.CallToolRequest, in pathArgs) (*gomcp.CallToolResult, any, error) {
	dir := in.Path
	if dir == "" {
		dir = "."
	}
	entries, err := fs.ReadDir(f.root.FS(), dir)
	if err != nil {
		return errorResult(err), nil, nil
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return textResult("%s", strings.Join(names, "\n")), nil, nil
}

func (f *filesServer) write(_ context.Context, _ *gomcp.CallToolRequest, in writeArgs) (*gomcp.CallToolResult, any, error) {
	if in.Path == "" {
		return errorResult(errors.New("path is required")), nil, nil
	}
	if err := f.root.WriteFile(in.Path, []byte(in.Content), 0o644); err != nil {
		return errorResult(err), nil, nil
	}
	return textResult("wrote %d bytes to %s", len(in.Content), in.Path), nil, nil
}

// index walks the workspace, one step per file, reporting progress.
func (f *filesServer) index(ctx context.Context, req *gomcp.CallToolRequest, in indexArgs) (*gomcp.CallToolResult, any, error) {
	dir := in.Dir
	if dir == "" {
		dir = "."
	}
	var files []string
	err := fs.WalkDir(f.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return errorResult(err), nil, nil
	}
	sort.Strings(files)
	words := 0
	token := req.Params.GetProgressToken()
	for i, p := range files {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(f.step):
		}
		b, err := f.root.ReadFile(p)
		if err == nil {
			words += len(strings.Fields(string(b)))
		}
		if token != nil {
			_ = req.Session.NotifyProgress(ctx, &gomcp.ProgressNotificationParams{ProgressToken: token,
				Progress: float64(i + 1), Total: float64(len(files)), Message: "indexed " + p})
		}
	}
	return textResult("indexed %d files, %d words", len(files), words), nil, nil
}
