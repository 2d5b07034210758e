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
				resp.Body = newSSEFilter(resp.Body, noticeEvent(t.onNotice))
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
		resp.Body = newSSEFilter(resp.Body, rewriteEvent(head.ID, seen))
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

// maxSSEEvent bounds an event that an sseFilter holds to look at; a
// longer one passes unchanged.
const maxSSEEvent = 64 << 20

// sseBuffer is the size of an sseFilter's read buffer: an event held
// is at most its filter's limit plus this.
const sseBuffer = 64 << 10

// sseAction is what an sseFilter does with one event.
type sseAction int

const (
	ssePass    sseAction = iota // the event passes unchanged
	sseDrop                     // the event is taken out of the stream
	sseReplace                  // the event's data lines give way to one carrying new data
)

// sseFilter is an event stream filtered event by event: each event with
// data lines, until the filtering is done, passes unchanged, is taken out
// or has its data replaced, as decide says; once the filtering is done (or
// an event passed its limit) the rest of the stream is copied as it
// comes.
type sseFilter struct {
	src io.ReadCloser
	r   *bufio.Reader
	// limit bounds the bytes of an event held to look at; a longer
	// event passes unchanged and ends the filtering (0: maxSSEEvent).
	limit int
	// decide says what to do with an event whose data lines' values,
	// joined, are data: its action, the new data of an sseReplace, and
	// whether the filtering is done after this event.
	decide func(data []byte) (act sseAction, newData []byte, done bool)
	out    bytes.Buffer
	done   bool
	err    error
}

// newSSEFilter is an sseFilter of src with the usual buffer and limit.
func newSSEFilter(src io.ReadCloser, decide func([]byte) (sseAction, []byte, bool)) *sseFilter {
	return &sseFilter{src: src, r: bufio.NewReaderSize(src, sseBuffer), limit: maxSSEEvent, decide: decide}
}

func (s *sseFilter) Read(p []byte) (int, error) {
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

func (s *sseFilter) Close() error { return s.src.Close() }

// next moves the stream's next event (its lines up to the blank line that
// ends it) to out, as decide says.
func (s *sseFilter) next() {
	limit := s.limit
	if limit <= 0 {
		limit = maxSSEEvent
	}
	event, long, err := readSSEEvent(s.r, limit)
	if err != nil {
		s.err = err
		if len(event) == 0 {
			return
		}
	}
	var data []byte
	if !long { // a long event's data is not looked at
		data = sseData(event)
	}
	if data == nil {
		s.done = long
		s.out.Write(event)
		return
	}
	act, newData, done := s.decide(data)
	s.done = done
	switch act {
	case sseDrop:
	case sseReplace:
		for l := range bytes.Lines(event) {
			if !bytes.HasPrefix(l, []byte("data:")) && len(bytes.TrimRight(l, "\r\n")) > 0 {
				s.out.Write(l)
			}
		}
		s.out.WriteString("data: ")
		s.out.Write(newData)
		s.out.WriteString("\n\n")
	default:
		s.out.Write(event)
	}
}

// rewriteEvent is the decide of an sseFilter that rewrites the event
// carrying the response to id (rewriteResponse), the events before it
// passing unchanged, and is done once it has passed.
func rewriteEvent(id json.RawMessage, seen func(json.RawMessage)) func([]byte) (sseAction, []byte, bool) {
	return func(data []byte) (sseAction, []byte, bool) {
		if out, ok := rewriteResponse(data, id, seen); ok {
			return sseReplace, out, true
		}
		return ssePass, nil, false
	}
}

// noticeEvent is the decide of an sseFilter of a listen's event stream:
// the events carrying a notifications/tasks are taken out, their task
// handed to onNotice (if any); the other events pass unchanged.
func noticeEvent(onNotice func(task string)) func([]byte) (sseAction, []byte, bool) {
	return func(data []byte) (sseAction, []byte, bool) {
		var n struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(data, &n) != nil || n.Method != taskwire.NotificationTasks || len(n.ID) != 0 {
			return ssePass, nil, false
		}
		if task, err := taskwire.ParseNotification(n.Params); err == nil && onNotice != nil {
			onNotice(task.TaskID)
		}
		return sseDrop, nil, false
	}
}

// readSSEEvent reads an event stream's next event from r: its bytes up to
// and with the blank line that ends it. long is set when the event passed
// limit bytes: reading stops there, within a line if need be, so that no
// more than limit plus r's buffer is held. err is io.EOF at the end of the
// stream with no event begun, else the read's error after the bytes read
// so far.
func readSSEEvent(r *bufio.Reader, limit int) (event []byte, long bool, err error) {
	line := 0 // where the event's last line begins
	for {
		piece, rerr := r.ReadSlice('\n')
		event = append(event, piece...)
		switch {
		case rerr == nil:
			if len(bytes.TrimRight(event[line:], "\r\n")) == 0 {
				return event, false, nil
			}
			line = len(event)
		case errors.Is(rerr, bufio.ErrBufferFull):
		case errors.Is(rerr, io.EOF) && len(event) == 0:
			return nil, false, io.EOF
		default:
			return event, false, rerr
		}
		if len(event) > limit {
			return event, true, nil
		}
	}
}

// sseData is the values of an event's data lines, joined; nil when it has
// none or they are all empty.
func sseData(event []byte) []byte {
	var data []byte
	for l := range bytes.Lines(event) {
		trimmed := bytes.TrimRight(l, "\r\n")
		if v, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
	return data
}
