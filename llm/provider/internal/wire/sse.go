package wire

import (
	"bytes"
	"strings"
)

// SSEEvent is one server-sent event: its "event:" name (empty when the
// stream names none) and its "data:" lines joined by newlines.
type SSEEvent struct {
	Name string
	Data string
}

// MaxSSELine bounds one line of an event stream (and so the memory a peer
// that never sends a newline can make us hold).
const MaxSSELine = 8 << 20

// SSEParser is an incremental parser of the text/event-stream format
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): feed it
// bytes as they arrive, in chunks of any size, and it calls emit for every
// complete event. Comments (":" lines), "id:" and "retry:" fields are
// ignored; lines end with LF, CRLF or CR.
type SSEParser struct {
	buf     []byte
	name    string
	data    strings.Builder
	hasData bool
	lastCR  bool
	Emit    func(SSEEvent)
	// tooLong is set when a line exceeded MaxSSELine; the rest of that line
	// is dropped.
	tooLong bool
}

// Feed parses p.
func (s *SSEParser) Feed(p []byte) {
	for len(p) > 0 {
		if s.lastCR {
			s.lastCR = false
			if p[0] == '\n' { // the LF of a CRLF whose CR ended the last chunk
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			if len(s.buf)+len(p) > MaxSSELine {
				s.tooLong = true
				s.buf = s.buf[:0]
			} else if !s.tooLong {
				s.buf = append(s.buf, p...)
			}
			return
		}
		var line []byte
		switch {
		case len(s.buf)+i > MaxSSELine:
			s.tooLong = true
		case len(s.buf) > 0:
			s.buf = append(s.buf, p[:i]...)
			line = s.buf
		default:
			line = p[:i]
		}
		if p[i] == '\r' {
			if i+1 < len(p) {
				if p[i+1] == '\n' {
					i++
				}
			} else {
				s.lastCR = true
			}
		}
		p = p[i+1:]
		if s.tooLong {
			s.tooLong = false
		} else {
			s.line(line)
		}
		s.buf = s.buf[:0]
	}
}

// Close dispatches an event left unterminated at the end of the stream.
func (s *SSEParser) Close() {
	if len(s.buf) > 0 && !s.tooLong {
		s.line(s.buf)
	}
	s.buf = s.buf[:0]
	s.line(nil)
}

func (s *SSEParser) line(line []byte) {
	if len(line) == 0 {
		if s.hasData && s.Emit != nil {
			s.Emit(SSEEvent{Name: s.name, Data: s.data.String()})
		}
		s.name, s.hasData = "", false
		s.data.Reset()
		return
	}
	if line[0] == ':' {
		return
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "event":
		s.name = string(value)
	case "data":
		if s.hasData {
			s.data.WriteByte('\n')
		}
		s.data.Write(value)
		s.hasData = true
	}
}
