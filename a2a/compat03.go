package a2a

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
)

// Rewrites in front of a2a-go's 0.3 bindings (a2av0), where what they read
// or write differs from what 0.3 clients (the JS SDK 0.3) send and read.

// Bounds of the rewrites.
const (
	// maxV03ErrorBody bounds an error body buffered to rewrite it; a
	// larger one passes through unchanged.
	maxV03ErrorBody = 64 << 10
	// maxV03ListBody bounds a push config list answer buffered to turn a
	// null result into []; a null result is far smaller, so a larger
	// answer passes through unchanged.
	maxV03ListBody = 4 << 10
)

// methodV03PushConfigList is the 0.3 JSON-RPC method whose empty result
// a2a-go writes as null.
const methodV03PushConfigList = "tasks/pushNotificationConfig/list"

// v03REST wraps a2a-go's 0.3 HTTP+JSON handler (paths under /v1): a
// create-push-config body that is the bare TaskPushNotificationConfig (the
// 0.3 HTTP rule's body: "config", which the JS SDK 0.3 client sends) is
// wrapped into the request message a2a-go reads; error answers get the 0.3
// form ({"code": <JSON-RPC code>, "message": ...}) with the same HTTP
// status, and so do error events in SSE streams (as "event: error", which
// 0.3 clients read). limit bounds the request body read (the body limit middleware
// has already bounded it).
func v03REST(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && isPushCreatePath(r.URL.Path) && r.Body != nil && r.Body != http.NoBody {
			body, ok := readBody(w, r, bindingREST, limit)
			if !ok {
				return
			}
			if out, ok := pushCreateBody(body); ok {
				body = out
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		cw := &captureWriter{w: w, max: maxV03ErrorBody,
			want: func(status int) bool { return status >= 400 }, event: sseErrorEvent}
		next.ServeHTTP(cw, r)
		cw.finish(v03ErrorBody)
	})
}

// v03JSONRPC wraps a2a-go's 0.3 JSON-RPC handler: the result of
// tasks/pushNotificationConfig/list for a task without configs is [], not
// null. limit bounds the request body read.
func v03JSONRPC(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := readBody(w, r, bindingJSONRPC, limit)
		if !ok {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &req) != nil || req.Method != methodV03PushConfigList {
			next.ServeHTTP(w, r)
			return
		}
		cw := &captureWriter{w: w, max: maxV03ListBody, want: func(status int) bool { return status == http.StatusOK }}
		next.ServeHTTP(cw, r)
		cw.finish(func(_ int, b []byte) ([]byte, bool) { return emptyListResult(b) })
	})
}

// readBody reads r's body, at most limit bytes; when it cannot, it answers
// 413 and ok is false.
func readBody(w http.ResponseWriter, r *http.Request, b binding, limit int64) (body []byte, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil || int64(len(body)) > limit {
		writeRequestError(w, b, http.StatusRequestEntityTooLarge, a2ago.ErrInvalidRequest,
			"the request body could not be read within the server's limit")
		return nil, false
	}
	return body, true
}

// isPushCreatePath reports whether p is /v1/tasks/{id}/pushNotificationConfigs.
func isPushCreatePath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/v1/tasks/")
	if !ok {
		return false
	}
	id, ok := strings.CutSuffix(rest, "/pushNotificationConfigs")
	return ok && id != "" && !strings.Contains(id, "/")
}

// pushCreateBody wraps a bare 0.3 TaskPushNotificationConfig ({"name"?,
// "pushNotificationConfig": {...}}) into the request message a2a-go reads
// ({"config": ...}); ok is false for anything else (a request message
// already, or not JSON: a2a-go reports it).
func pushCreateBody(body []byte) (out []byte, ok bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return nil, false
	}
	if _, isRequest := top["config"]; isRequest {
		return nil, false
	}
	if _, isConfig := top["pushNotificationConfig"]; !isConfig {
		return nil, false
	}
	out, err := json.Marshal(map[string]json.RawMessage{"config": body})
	return out, err == nil
}

// v03Codes are the 0.3 (JSON-RPC) codes of the ErrorInfo reasons a2a-go
// writes in AIP-193 errors.
var v03Codes = func() map[string]int {
	m := make(map[string]int, len(legacyCodes))
	for code, sentinel := range legacyCodes {
		m[a2ago.ErrorReason(sentinel)] = code
	}
	return m
}()

// v03StatusCodes are the 0.3 codes of AIP-193 statuses, for an error
// without a known reason.
var v03StatusCodes = map[string]int{
	"NOT_FOUND":           -32001,
	"INVALID_ARGUMENT":    -32602,
	"FAILED_PRECONDITION": -32004,
	"UNIMPLEMENTED":       -32601,
	"UNAUTHENTICATED":     -31401,
	"PERMISSION_DENIED":   -31403,
}

// v03ErrorBody rewrites an AIP-193 error body ({"error": {"code", "status",
// "message", "details"}}) in the 0.3 form: {"code": <JSON-RPC code>,
// "message": ...}, keeping the AIP-193 "error" member so that clients
// reading that form (a2a-go's 0.3 REST client) still get a typed error.
// ok is false when body is not an AIP-193 error.
func v03ErrorBody(_ int, body []byte) (out []byte, ok bool) {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Error) == 0 {
		return nil, false
	}
	var e struct {
		Status  string            `json:"status"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details"`
	}
	if json.Unmarshal(v.Error, &e) != nil {
		return nil, false
	}
	code, known := 0, false
	for _, raw := range e.Details {
		var info struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
			Domain string `json:"domain"`
		}
		if json.Unmarshal(raw, &info) == nil && strings.HasSuffix(info.Type, "google.rpc.ErrorInfo") &&
			info.Domain == a2ago.ProtocolDomain {
			code, known = v03Codes[info.Reason]
			break
		}
	}
	if !known {
		code, known = v03StatusCodes[e.Status]
	}
	if !known {
		code = -32603
	}
	msg := e.Message
	if msg == "" {
		msg = legacyCodes[code].Error()
	}
	out, err := json.Marshal(struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}{code, msg, v.Error})
	return out, err == nil
}

// sseErrorEvent rewrites one SSE data event written by a2a-go that holds
// an AIP-193 error ("data: {\"error\": ...}\n\n", written in one piece) as
// the 0.3 error event: "event: error" with the 0.3 body (v03ErrorBody). ok
// is false for anything else, which passes unchanged.
func sseErrorEvent(p []byte) (out []byte, ok bool) {
	data, isData := bytes.CutPrefix(p, []byte("data: "))
	data, ended := bytes.CutSuffix(data, []byte("\n\n"))
	if !isData || !ended || bytes.IndexByte(data, '\n') >= 0 {
		return nil, false
	}
	body, ok := v03ErrorBody(0, data)
	if !ok {
		return nil, false
	}
	return append(append([]byte("event: error\ndata: "), body...), "\n\n"...), true
}

// emptyListResult turns a JSON-RPC answer with "result": null into one with
// "result": []; ok is false for any other answer.
func emptyListResult(body []byte) (out []byte, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return nil, false
	}
	res, has := m["result"]
	if _, isErr := m["error"]; isErr || !has || string(bytes.TrimSpace(res)) != "null" {
		return nil, false
	}
	m["result"] = json.RawMessage("[]")
	out, err := json.Marshal(m)
	return out, err == nil
}

// captureWriter holds back a response that want selects (by status), at
// most max bytes of it, for finish to rewrite; a larger one, and every
// other response, passes through as written.
type captureWriter struct {
	w         http.ResponseWriter
	max       int
	want      func(status int) bool
	event     func(p []byte) ([]byte, bool) // rewrites one write of an SSE stream (nil: none)
	status    int
	capturing bool
	buf       bytes.Buffer
}

func (c *captureWriter) Header() http.Header { return c.w.Header() }

func (c *captureWriter) WriteHeader(status int) {
	if c.status != 0 {
		return
	}
	c.status = status
	if c.want(status) {
		c.capturing = true
		return
	}
	c.w.WriteHeader(status)
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.capturing {
		if c.event != nil && strings.HasPrefix(c.w.Header().Get("Content-Type"), "text/event-stream") {
			if out, ok := c.event(p); ok {
				if _, err := c.w.Write(out); err != nil {
					return 0, err
				}
				return len(p), nil
			}
		}
		return c.w.Write(p)
	}
	if c.buf.Len()+len(p) <= c.max {
		return c.buf.Write(p)
	}
	// Too large to rewrite: what was held back goes out as it is.
	c.capturing = false
	c.w.WriteHeader(c.status)
	if _, err := c.w.Write(c.buf.Bytes()); err != nil {
		return 0, err
	}
	c.buf = bytes.Buffer{}
	return c.w.Write(p)
}

// Flush flushes a response that passes through (SSE streams); a captured
// one is written by finish.
func (c *captureWriter) Flush() {
	if c.capturing {
		return
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.w }

// finish writes a captured response, rewritten by rewrite when it says ok
// (then as application/json).
func (c *captureWriter) finish(rewrite func(status int, body []byte) ([]byte, bool)) {
	if !c.capturing {
		return
	}
	body := c.buf.Bytes()
	if out, ok := rewrite(c.status, body); ok {
		body = append(out, '\n')
		c.w.Header().Set("Content-Type", "application/json")
	}
	c.w.Header().Del("Content-Length")
	c.w.WriteHeader(c.status)
	_, _ = c.w.Write(body)
}
