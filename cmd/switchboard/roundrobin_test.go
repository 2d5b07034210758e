package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRoundRobinKeepsStreams: the test's balancer must not cut a streamed
// response whose request body it was still forwarding. Behind
// httputil.ReverseProxy as is, writing the response head makes the
// balancer's own net/http server drain and close the inbound request body
// ((*chunkWriter).writeHeader), while the proxy's Transport still reads it
// (the read past Content-Length in transferWriter.writeBody); that read
// fails, persistConn.writeLoop closes the connection to the backend, and
// the response is cut: a go-sdk client reports "request terminated without
// response" for a call the gateway answered (golang/go#40747). The client
// here sends its body late, and the backend answers before reading it, so
// that the body is still being forwarded when the response head comes
// back; go-sdk reads the whole body first, where only an unlucky schedule
// opens that window.
func TestRoundRobinKeepsStreams(t *testing.T) {
	cases := []struct {
		name      string
		early     bool // the backend answers before reading the body
		bodyDelay time.Duration
		n         int
	}{
		{"answer after the body, as go-sdk", false, 0, 80},
		{"answer before a late body", true, 20 * time.Millisecond, 60},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var gws []*gatewayProc
			for i := range 3 {
				be := httptest.NewServer(sseBackend(tc.early))
				t.Cleanup(be.Close)
				gws = append(gws, &gatewayProc{name: fmt.Sprintf("b%d", i), url: be.URL + "/mcp"})
			}
			_, lb := newRoundRobin(t, gws, func(string) string { return "" })
			client := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(client.CloseIdleConnections)
			cut := 0
			var first error
			for i := range tc.n {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i)
				if err := postStream(t, client, lb.URL, body, tc.bodyDelay); err != nil {
					cut++
					if first == nil {
						first = err
					}
				}
			}
			if cut > 0 {
				t.Errorf("%d of %d streamed responses cut by the balancer; first: %v", cut, tc.n, first)
			}
		})
	}
}

// sseBackend answers a POST with two SSE events, the body's and "end";
// early, it sends the head and a comment before reading the body, and
// the events 10 ms after it.
func sseBackend(early bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		w.Header().Set("Content-Type", "text/event-stream")
		if early {
			if err := rc.EnableFullDuplex(); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, ": ok\n\n")
			_ = rc.Flush()
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			if !early {
				http.Error(w, err.Error(), http.StatusBadRequest)
			}
			return
		}
		if early {
			// leave a cut connection time to show before the answer
			time.Sleep(10 * time.Millisecond)
		}
		_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
		_ = rc.Flush()
		_, _ = io.WriteString(w, "event: message\ndata: end\n\n")
	})
}

// postStream posts body (sent after delay, its length declared) and reads
// the SSE response to its end.
func postStream(t *testing.T, c *http.Client, url, body string, delay time.Duration) error {
	pr, pw := io.Pipe()
	go func() {
		time.Sleep(delay)
		_, err := io.WriteString(pw, body)
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	req, err := http.NewRequestWithContext(ctx(t, 30*time.Second), http.MethodPost, url, pr)
	if err != nil {
		return err
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("after %d events: %w", len(data), err)
	}
	if len(data) != 2 || data[0] != body || data[1] != "end" {
		return fmt.Errorf("events %q", data)
	}
	return nil
}
