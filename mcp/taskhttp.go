package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// Over Streamable HTTP go-sdk's connection is its own (it learns the
// session's protocol through a method a wrapper cannot have), so the
// rewrite of a task answering a tools/call (taskConn) happens on the HTTP
// response instead: taskRT rewrites the response to a POST of tools/call,
// whether a JSON body or an event stream. It also sets the Mcp-Name
// header of tasks/get, tasks/update and tasks/cancel to the task's id, as
// SEP-2663 requires so that intermediaries route them to the task's
// replica.
type taskRT struct {
	base     http.RoundTripper
	onTask   func(token, task string) // as taskConn's
	onNotice func(task string)        // as taskConn's
}

// maxTaskBody bounds the JSON body of a tools/call response that taskRT
// reads whole; a longer one passes unchanged.
const maxTaskBody = 64 << 20

func (t taskRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.GetBody == nil || r.ContentLength <= 0 || r.ContentLength > maxIDScan {
		return t.base.RoundTrip(r)
	}
	body, err := r.GetBody()
	if err != nil {
		return t.base.RoundTrip(r)
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	derr := json.NewDecoder(body).Decode(&head)
	_ = body.Close()
	if derr != nil || len(head.ID) == 0 {
		return t.base.RoundTrip(r)
	}
	switch head.Method {
	case taskwire.MethodGet, taskwire.MethodUpdate, taskwire.MethodCancel:
		var p struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(head.Params, &p) == nil && p.TaskID != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Mcp-Name", p.TaskID)
		}
		return t.base.RoundTrip(r)
	case taskwire.MethodListen:
		// The listen's stream carries the notifications/tasks, which
		// go-sdk does not know: they go to onNotice instead.
		resp, err := t.base.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusOK && resp.Body != nil {
			if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
				resp.Body = &sseNotices{src: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10), onNotice: t.onNotice}
			}
		}
		return resp, err
	case "tools/call":
	default:
		return t.base.RoundTrip(r)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp, err
	}
	seen := func(json.RawMessage) {}
	if token := progressTokenOf(head.Params); token != "" && t.onTask != nil {
		seen = func(res json.RawMessage) {
			if id := taskIDOf(res); id != "" {
				t.onTask(token, id)
			}
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		resp.Body = rewriteJSONBody(resp.Body, head.ID, seen)
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	case "text/event-stream":
		resp.Body = &sseRewriter{src: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10), id: head.ID, seen: seen}
	}
	return resp, nil
}

// rewriteResponse rewrites msg when it is the response to the request id
// (rewriteTaskResult), handing the rewritten result to seen; ok reports
// whether it was.
func rewriteResponse(msg []byte, id json.RawMessage, seen func(json.RawMessage)) ([]byte, bool) {
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &resp) != nil || len(resp.Result) == 0 || !sameID(resp.ID, id) {
		return msg, false
	}
	res := rewriteTaskResult(resp.Result)
	seen(res)
	if bytes.Equal(res, resp.Result) {
		return msg, true
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(msg, &all) != nil {
		return msg, true
	}
	all["result"] = res
	out, err := json.Marshal(all)
	if err != nil {
		return msg, true
	}
	return out, true
}

// sameID reports whether two JSON-RPC ids are the same value.
func sameID(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return x == y
}

// rewriteJSONBody is a JSON response body, read whole (up to maxTaskBody)
// and rewritten.
func rewriteJSONBody(body io.ReadCloser, id json.RawMessage, seen func(json.RawMessage)) io.ReadCloser {
	data, err := io.ReadAll(io.LimitReader(body, maxTaskBody+1))
	if err != nil || len(data) > maxTaskBody {
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), errReader{err}, body), body}
	}
	out, _ := rewriteResponse(data, id, seen)
	return struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(out), body}
}

// errReader fails with err (nil: it ends).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// maxSSEEvent bounds an event that sseRewriter holds to look at; a longer
// one passes unchanged.
const maxSSEEvent = 64 << 20

// sseRewriter is an event stream whose event carrying the response to id
// is rewritten; the events before it pass unchanged, and once it has passed
// the rest of the stream is copied as it comes.
type sseRewriter struct {
	src  io.ReadCloser
	r    *bufio.Reader
	id   json.RawMessage
	seen func(json.RawMessage)
	out  bytes.Buffer
	done bool
	err  error
}

func (s *sseRewriter) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.done {
			return s.r.Read(p)
		}
		s.next()
	}
	return s.out.Read(p)
}

func (s *sseRewriter) Close() error { return s.src.Close() }

// next moves the stream's next event (its lines up to the blank line that
// ends it) to out, rewritten if it is the response.
func (s *sseRewriter) next() {
	event, data, long, err := readSSEEvent(s.r)
	if err != nil {
		s.err = err
		if len(event) == 0 {
			return
		}
	}
	s.done = s.done || long
	if !s.done && data != nil {
		if out, ok := rewriteResponse(data, s.id, s.seen); ok {
			s.done = true
			var kept [][]byte
			for _, l := range event {
				if !bytes.HasPrefix(l, []byte("data:")) && len(bytes.TrimRight(l, "\r\n")) > 0 {
					kept = append(kept, l)
				}
			}
			for _, l := range kept {
				s.out.Write(l)
			}
			s.out.WriteString("data: ")
			s.out.Write(out)
			s.out.WriteString("\n\n")
			return
		}
	}
	for _, l := range event {
		s.out.Write(l)
	}
}

// sseNotices is a listen's event stream from which the events carrying a
// notifications/tasks are taken out, their task handed to onNotice; the
// other events pass unchanged. An event longer than maxSSEEvent ends the
// filtering: the rest of the stream is copied as it comes.
type sseNotices struct {
	src      io.ReadCloser
	r        *bufio.Reader
	onNotice func(task string)
	out      bytes.Buffer
	done     bool
	err      error
}

func (s *sseNotices) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.done {
			return s.r.Read(p)
		}
		s.next()
	}
	return s.out.Read(p)
}

func (s *sseNotices) Close() error { return s.src.Close() }

// next moves the stream's next event to out, unless it is a
// notifications/tasks.
func (s *sseNotices) next() {
	event, data, long, err := readSSEEvent(s.r)
	if err != nil {
		s.err = err
		if len(event) == 0 {
			return
		}
	}
	s.done = s.done || long
	if !s.done && data != nil {
		var n struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(data, &n) == nil && n.Method == taskwire.NotificationTasks && len(n.ID) == 0 {
			if task, err := taskwire.ParseNotification(n.Params); err == nil && s.onNotice != nil {
				s.onNotice(task.TaskID)
			}
			return
		}
	}
	for _, l := range event {
		s.out.Write(l)
	}
}

// readSSEEvent reads an event stream's next event from r: its lines up to
// the blank line that ends it, and its data lines' values joined. long is
// set when the event passed maxSSEEvent bytes (reading stops there); err
// is io.EOF at the end of the stream with no event begun, else the read's
// error after the lines read so far.
func readSSEEvent(r *bufio.Reader) (event [][]byte, data []byte, long bool, err error) {
	size := 0
	for {
		line, rerr := r.ReadBytes('\n')
		size += len(line)
		if len(line) > 0 {
			event = append(event, line)
			trimmed := bytes.TrimRight(line, "\r\n")
			if v, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
				v = bytes.TrimPrefix(v, []byte(" "))
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, v...)
			}
			if len(trimmed) == 0 {
				return event, data, false, nil
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) && len(event) == 0 {
				return nil, nil, false, io.EOF
			}
			return event, data, false, rerr
		}
		if size > maxSSEEvent {
			return event, data, true, nil
		}
	}
}
