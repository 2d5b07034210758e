// Command testserver is an MCP stdio server for the mcp package's fault
// tests. TESTSERVER_MODE selects a misbehaviour: "" (well behaved),
// "garbage" (writes non-JSON to stdout), "nohandshake" (reads but never
// answers), "nodiscover" (ignores server/discover, as legacy servers do),
// "slowstart" (sleeps TESTSERVER_DELAY before serving), "stubborn"
// (ignores SIGTERM and outlives its input). TESTSERVER_MARKER
// names a file the server appends events to ("cancelled <tool>").
//
// On Unix, where stdout is written through one locked writer, the tools
// deafen (stop reading stdin for good), logflood (write n log
// notifications as fast as the pipe takes them), updateflood (n
// resources/updated notifications for three URIs), garbage (write a line
// that is not JSON, then never answer) and oversize (write one line of
// bytes bytes, then never answer) misbehave mid-session.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func mark(event string) {
	p := os.Getenv("TESTSERVER_MARKER")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, event)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type slowIn struct {
	Steps  int `json:"steps"`
	StepMS int `json:"step_ms"`
}

type hugeIn struct {
	Bytes int `json:"bytes"`
}

type floodIn struct {
	N int `json:"n"`
}

type weather struct {
	City  string  `json:"city"`
	TempC float64 `json:"temp_c"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// out is stdout as the transport writes it, when the raw tools may write
// to it too (nil: they are not offered).
var out *lockedWriter

// deaf, once closed, makes every read of stdin block for good.
var deaf = make(chan struct{})

type rawIn struct {
	N     int `json:"n,omitempty"`
	Bytes int `json:"bytes,omitempty"`
}

// addRawTools adds the tools that write to stdout behind the transport's
// back.
func addRawTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "deafen", Description: "Stop reading stdin (after answering)."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mark("deaf")
			select {
			case <-deaf:
			default:
				close(deaf)
			}
			return text("no longer reading"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "logflood", Description: "Write n log notifications."},
		func(ctx context.Context, req *mcp.CallToolRequest, in rawIn) (*mcp.CallToolResult, any, error) {
			pad := strings.Repeat("x", 400)
			for i := 0; i < in.N; i++ {
				line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"flood","data":"message %d %s"}}`+"\n", i, pad)
				if _, err := out.Write([]byte(line)); err != nil {
					return nil, nil, err
				}
			}
			mark("flooded")
			return text(fmt.Sprintf("sent %d log messages", in.N)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "updateflood", Description: "Write n resources/updated notifications for test://r<i mod 3>."},
		func(ctx context.Context, req *mcp.CallToolRequest, in rawIn) (*mcp.CallToolResult, any, error) {
			for i := 0; i < in.N; i++ {
				line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://r%d"}}`+"\n", i%3)
				if _, err := out.Write([]byte(line)); err != nil {
					return nil, nil, err
				}
			}
			return text(fmt.Sprintf("sent %d updates", in.N)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "garbage", Description: "Write a line that is not JSON, then hang."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			_, _ = out.Write([]byte("panic: something went wrong in the server\n"))
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "oversize", Description: "Write one line of bytes bytes, then hang."},
		func(ctx context.Context, req *mcp.CallToolRequest, in rawIn) (*mcp.CallToolResult, any, error) {
			line := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("y", in.Bytes) + `"}}` + "\n")
			_, _ = out.Write(line)
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
}

// lockedWriter writes each message whole, whoever writes it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// deafReader reads r until deaf is closed, then blocks for good.
type deafReader struct{ r io.Reader }

func (d deafReader) Read(p []byte) (int, error) {
	select {
	case <-deaf:
		select {}
	default:
	}
	n, err := d.r.Read(p)
	select {
	case <-deaf:
		select {}
	default:
	}
	return n, err
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "traceparent", Description: "Return the W3C trace context the request carried in _meta."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			tp, _ := req.Params.Meta["traceparent"].(string)
			ts, _ := req.Params.Meta["tracestate"].(string)
			return text("traceparent=" + tp + " tracestate=" + ts), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Report progress for steps*step_ms."},
		func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				select {
				case <-ctx.Done():
					mark("cancelled slow")
					return nil, nil, ctx.Err()
				case <-time.After(time.Duration(in.StepMS) * time.Millisecond):
				}
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
				}
			}
			return text(fmt.Sprintf("done after %d steps", in.Steps)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answer; notes cancellation."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mark("started hang")
			<-ctx.Done()
			mark("cancelled hang")
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the process mid-call."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mark("crashing")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "huge", Description: "Return a large text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, any, error) {
			var b strings.Builder
			for i := 0; b.Len() < in.Bytes; i++ {
				fmt.Fprintf(&b, "line %07d of a large result\n", i)
			}
			return text(b.String()[:in.Bytes]), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Return a text and an image of bytes bytes (byte i is i*7 mod 251)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, any, error) {
			data := make([]byte, in.Bytes)
			for i := range data {
				data[i] = byte(i * 7 % 251)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a chart"},
				&mcp.ImageContent{Data: data, MIMEType: "image/png"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "weather", Description: "Structured output."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, weather, error) {
			return nil, weather{City: in.Text, TempC: 21.5}, nil
		})
	s.AddTool(&mcp.Tool{Name: "badweather", Description: "Structured output that breaks its schema.",
		InputSchema:  map[string]any{"type": "object"},
		OutputSchema: map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": map[string]any{"temp_c": map[string]any{"type": "number"}}, "required": []string{"temp_c"}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}, StructuredContent: map[string]any{"temp_c": "warm"}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Return isError."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("the widget is broken")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Description: "Add n tools one by one (n list_changed notifications)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in floodIn) (*mcp.CallToolResult, any, error) {
			for i := 0; i < in.N; i++ {
				s.AddTool(&mcp.Tool{Name: fmt.Sprintf("extra-%03d", i), InputSchema: map[string]any{"type": "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("extra"), nil })
			}
			return text(fmt.Sprintf("added %d tools", in.N)), nil, nil
		})
	if out != nil {
		addRawTools(s)
	}
	return s
}

// filterReader drops input lines containing drop.
type filterReader struct {
	sc   *bufio.Scanner
	drop string
	buf  []byte
}

func (f *filterReader) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if !f.sc.Scan() {
			if err := f.sc.Err(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		line := f.sc.Bytes()
		if strings.Contains(string(line), f.drop) {
			continue
		}
		f.buf = append(append(f.buf[:0], line...), '\n')
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

func main() {
	ctx := context.Background()
	var t mcp.Transport = &mcp.StdioTransport{}
	switch os.Getenv("TESTSERVER_MODE") {
	case "garbage":
		fmt.Println("Starting server... this is not JSON-RPC")
		fmt.Println("{{{{ garbage")
	case "nohandshake":
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	case "nodiscover":
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		t = &mcp.IOTransport{Reader: io.NopCloser(&filterReader{sc: sc, drop: `"server/discover"`}), Writer: os.Stdout}
	case "stubborn":
		// Ignores SIGTERM and keeps running after its input closes: only
		// SIGKILL stops it.
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "testserver starting")
		_ = newServer().Run(ctx, t)
		select {}
	case "slowstart":
		d, _ := time.ParseDuration(os.Getenv("TESTSERVER_DELAY"))
		time.Sleep(d)
	}
	if _, ok := t.(*mcp.StdioTransport); ok {
		t = pollableStdio()
	}
	fmt.Fprintln(os.Stderr, "testserver starting")
	if err := newServer().Run(ctx, t); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}
