package e2etest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.36.0"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/llm"
)

// envMode selects what the re-executed test binary is: an MCP server
// ("mcp"), an A2A peer ("a2a") or a bus worker ("worker").
const (
	envMode   = "OTEL21_MODE"
	envBusURL = "OTEL21_BUS_URL"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envMode) {
	case "mcp":
		os.Exit(mcpServer())
	case "mcpsb":
		os.Exit(sbMCPServer())
	case "a2a":
		os.Exit(a2aPeer())
	case "worker":
		os.Exit(workerProc())
	}
	code := m.Run()
	if code == 0 {
		http.DefaultClient.CloseIdleConnections()
		if err := goleak.Find(goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// mcpServer is a stdio MCP server whose tool "traceparent" answers with the
// W3C trace context the request carried in params._meta.
func mcpServer() int {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "otel21-mcp", Version: "1.0.0"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "traceparent", Description: "Report the request's trace context."},
		func(ctx context.Context, req *gomcp.CallToolRequest, _ struct{}) (*gomcp.CallToolResult, any, error) {
			tp, _ := req.Params.Meta["traceparent"].(string)
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "traceparent=" + tp}}}, nil, nil
		})
	if err := s.Run(context.Background(), &gomcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcp server:", err)
		return 1
	}
	return 0
}

// exporting is a tracer provider exporting synchronously over OTLP/HTTP to
// $OTEL_EXPORTER_OTLP_ENDPOINT, as service.
func exporting(ctx context.Context, service string) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(semconv.ServiceName(service))
	return sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res)), nil
}

// a2aPeer serves a traced agent over A2A on a loopback port it prints as
// "URL <url>", until interrupted.
func a2aPeer() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tp, err := exporting(ctx, "a2a-peer")
	if err != nil {
		fmt.Fprintln(os.Stderr, "a2a peer:", err)
		return 1
	}
	defer func() { _ = tp.Shutdown(context.Background()) }()
	a, err := agent.New(ctx, agent.Config{Name: "researcher", Model: llm.NewCyclic(llm.Say("researched")),
		Telemetry: agent.Telemetry{TracerProvider: tp}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "a2a peer:", err)
		return 1
	}
	srv, err := a2a.NewServer(ctx, a2a.ServerConfig{Agent: a})
	if err != nil {
		fmt.Fprintln(os.Stderr, "a2a peer:", err)
		return 1
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "a2a peer:", err)
		return 1
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	fmt.Printf("URL http://%s\n", ln.Addr())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return 0
}

// workerProc serves a traced agent as the pool "step" on the bus at
// $OTEL21_BUS_URL, printing "READY" once it listens, until interrupted.
func workerProc() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tp, err := exporting(ctx, "worker")
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer func() { _ = tp.Shutdown(context.Background()) }()
	b, err := bus.New(ctx, bus.Config{URLs: []string{os.Getenv(envBusURL)}, Name: "otel21-worker"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer b.Close()
	a, err := agent.New(ctx, agent.Config{Name: "step", Model: llm.NewCyclic(llm.Say("stepped")),
		Telemetry: agent.Telemetry{TracerProvider: tp}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	srv, err := worker.Serve(ctx, b, a, worker.ServeConfig{ID: "w1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	fmt.Println("READY")
	select {
	case <-ctx.Done():
		_ = srv.Close()
	case <-srv.Done():
	}
	return 0
}

// child starts the test binary in mode with env, waits for its first line
// of output starting with prefix and returns the rest of that line. The
// child is interrupted and waited for when the test ends.
func child(t *testing.T, mode, prefix string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envMode+"="+mode), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, prefix) {
				lines <- strings.TrimSpace(strings.TrimPrefix(l, prefix))
				break
			}
		}
		for sc.Scan() { // drain until the child exits
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("the %s process ended before saying %q", mode, prefix)
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatalf("the %s process did not say %q within 30s", mode, prefix)
	}
	return ""
}
