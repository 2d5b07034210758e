package sessionroute

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/switchboard-dev/switchboard/failure"
)

// The wire between the replica a request reached (the receiver) and the
// replica owning its session (the owner), all on core NATS:
//
//	receiver → owner  <prefix>.mcp.session.<owner>, request:  start
//	owner → receiver  reply:                                  'K' + control inbox | 'X' + status + text
//	receiver → owner  control inbox, request:                 'B' + seq + body chunk (body past the start) | 'P' (ping)
//	receiver → owner  control inbox, publish:                 'C' (the client went away)
//	owner → receiver  the start's reply inbox, request:       frame (flags, seq, [head], data)
//	receiver → owner  reply to a frame:                       'A' (written to the client) | 'C' (stop)
//
// The owner sends one frame at a time and waits for its ack, which the
// receiver gives once the bytes are written and flushed to the client: the
// stream is flow-controlled end to end and each side holds one chunk.

// wireVersion is the version of the start message.
const wireVersion = 1

// maxHeaders bounds the header lines of a forwarded request.
const maxHeaders = 200

// start is the forwarded request: everything the owner needs to serve it
// as if it had reached it, and where to send the response.
type start struct {
	V       int         `json:"v"`
	Method  string      `json:"method"`
	URI     string      `json:"uri"`
	Host    string      `json:"host"`
	Header  http.Header `json:"header"`
	Remote  string      `json:"remote,omitempty"`
	Local   string      `json:"local,omitempty"`
	Reply   string      `json:"reply"`
	BodyLen int64       `json:"bodyLen"`
}

// encodeStart is uvarint(len(json)) | json | the first part of the body.
func encodeStart(s *start, body []byte) ([]byte, error) {
	js, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, len(js)+len(body)+binary.MaxVarintLen64), uint64(len(js)))
	out = append(out, js...)
	return append(out, body...), nil
}

// decodeStart parses and checks a start message; maxBody bounds the
// announced body. The body part returned aliases data.
func decodeStart(data []byte, maxBody int64) (*start, []byte, error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)-k) {
		return nil, nil, protocolErr("start message: bad envelope length")
	}
	var s start
	if err := json.Unmarshal(data[k:k+int(n)], &s); err != nil {
		return nil, nil, failure.Wrap(failure.Protocol, failure.SourceMCP, fmt.Errorf("start message: %w", err))
	}
	body := data[k+int(n):]
	if err := s.check(int64(len(body)), maxBody); err != nil {
		return nil, nil, err
	}
	return &s, body, nil
}

// check refuses a start that cannot be served as an HTTP request.
func (s *start) check(part, maxBody int64) error {
	switch {
	case s.V != wireVersion:
		return protocolErr(fmt.Sprintf("start message: version %d, want %d", s.V, wireVersion))
	case s.Method != http.MethodGet && s.Method != http.MethodPost && s.Method != http.MethodDelete:
		return protocolErr(fmt.Sprintf("start message: method %q is not GET, POST or DELETE", s.Method))
	case !strings.HasPrefix(s.URI, "/"):
		return protocolErr(fmt.Sprintf("start message: uri %q is not a path", s.URI))
	case !validSubject(s.Reply):
		return protocolErr(fmt.Sprintf("start message: reply %q is not a subject", s.Reply))
	case s.BodyLen < part || s.BodyLen > maxBody:
		return protocolErr(fmt.Sprintf("start message: body of %d bytes (%d sent) past the limit of %d", s.BodyLen, part, maxBody))
	case !httpguts.ValidHostHeader(s.Host):
		return protocolErr(fmt.Sprintf("start message: host %q", s.Host))
	}
	if _, err := url.ParseRequestURI(s.URI); err != nil {
		return protocolErr(fmt.Sprintf("start message: uri %q: %v", s.URI, err))
	}
	lines := 0
	for name, vs := range s.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			return protocolErr(fmt.Sprintf("start message: header name %q", name))
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return protocolErr(fmt.Sprintf("start message: value of header %q", name))
			}
		}
		if lines += len(vs); lines > maxHeaders {
			return protocolErr(fmt.Sprintf("start message: more than %d header lines", maxHeaders))
		}
	}
	return nil
}

// validSubject reports whether s is a literal NATS subject (no blanks, no
// wildcards, no empty tokens).
func validSubject(s string) bool {
	if s == "" || len(s) > 256 || strings.ContainsAny(s, " \t\r\n*>") {
		return false
	}
	for _, tok := range strings.Split(s, ".") {
		if tok == "" {
			return false
		}
	}
	return true
}

// Frame flags.
const (
	flagHead = 1 << iota // carries the status and headers
	flagEnd              // the last frame of the response
)

// head is the status and headers of a response.
type head struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
}

// frame is one piece of a response, owner to receiver.
type frame struct {
	flags byte
	seq   uint64
	head  *head
	data  []byte
}

// encodeFrame is flags | uvarint(seq) | [uvarint(len(head)) | head] | data.
func encodeFrame(f *frame) ([]byte, error) {
	out := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(f.data)+256)
	out = append(out, f.flags)
	out = binary.AppendUvarint(out, f.seq)
	if f.flags&flagHead != 0 {
		js, err := json.Marshal(f.head)
		if err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(len(js)))
		out = append(out, js...)
	}
	return append(out, f.data...), nil
}

// decodeFrame parses a frame; its data aliases b.
func decodeFrame(b []byte) (*frame, error) {
	if len(b) == 0 || b[0]&^(flagHead|flagEnd) != 0 {
		return nil, protocolErr("response frame: bad flags")
	}
	f := &frame{flags: b[0]}
	seq, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return nil, protocolErr("response frame: bad sequence number")
	}
	f.seq, b = seq, b[1+k:]
	if f.flags&flagHead != 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, protocolErr("response frame: bad head length")
		}
		f.head = &head{}
		if err := json.Unmarshal(b[k:k+int(n)], f.head); err != nil {
			return nil, failure.Wrap(failure.Protocol, failure.SourceMCP, fmt.Errorf("response frame: %w", err))
		}
		if f.head.Status < 200 || f.head.Status > 599 {
			return nil, protocolErr(fmt.Sprintf("response frame: status %d", f.head.Status))
		}
		for name, vs := range f.head.Header {
			if !httpguts.ValidHeaderFieldName(name) {
				return nil, protocolErr(fmt.Sprintf("response frame: header name %q", name))
			}
			for _, v := range vs {
				if !httpguts.ValidHeaderFieldValue(v) {
					return nil, protocolErr(fmt.Sprintf("response frame: value of header %q", name))
				}
			}
		}
		b = b[k+int(n):]
	}
	f.data = b
	return f, nil
}

// encodeChunk is a body chunk past the start: 'B' | uvarint(seq) | bytes.
func encodeChunk(seq uint64, data []byte) []byte {
	out := binary.AppendUvarint([]byte{'B'}, seq)
	return append(out, data...)
}

// decodeChunk parses a body chunk; its data aliases b.
func decodeChunk(b []byte) (uint64, []byte, error) {
	if len(b) == 0 || b[0] != 'B' {
		return 0, nil, protocolErr("body chunk: bad type")
	}
	seq, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return 0, nil, protocolErr("body chunk: bad sequence number")
	}
	return seq, b[1+k:], nil
}

// encodeRefusal is the owner's refusal of a start: 'X' | uvarint(status) | text.
func encodeRefusal(status int, text string) []byte {
	return append(binary.AppendUvarint([]byte{'X'}, uint64(status)), text...)
}

// decodeStartReply parses the owner's answer to a start: its control inbox,
// or the status and text of its refusal.
func decodeStartReply(b []byte) (ctl string, status int, text string, err error) {
	switch {
	case len(b) > 1 && b[0] == 'K' && validSubject(string(b[1:])):
		return string(b[1:]), 0, "", nil
	case len(b) > 1 && b[0] == 'X':
		st, k := binary.Uvarint(b[1:])
		if k > 0 && st >= 400 && st <= 599 {
			return "", int(st), string(b[1+k:]), nil
		}
	}
	return "", 0, "", protocolErr("start reply: malformed")
}

func protocolErr(msg string) *failure.Error {
	return failure.New(failure.Protocol, failure.SourceMCP, "session route: "+msg)
}
