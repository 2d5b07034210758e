package sessionroute

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func validStart() *start {
	return &start{V: wireVersion, Method: http.MethodPost, URI: "/mcp?x=1", Host: "127.0.0.1:8080",
		Header: http.Header{"Mcp-Session-Id": {"ABC"}, "Content-Type": {"application/json"}},
		Remote: "127.0.0.1:5555", Local: "127.0.0.1:8080", Reply: "_INBOX.abc.def", BodyLen: 5}
}

// TestDecodeStart: a start is refused, with a Protocol failure naming
// what was wrong, unless it can be served as an HTTP request.
func TestDecodeStart(t *testing.T) {
	cases := []struct {
		name string
		mod  func(s *start)
		body string
		want string // "" accepted, else part of the error
	}{
		{"valid", func(*start) {}, "hello", ""},
		{"version", func(s *start) { s.V = 2 }, "hello", "version 2"},
		{"method", func(s *start) { s.Method = "PUT" }, "hello", `method "PUT"`},
		{"uri", func(s *start) { s.URI = "http://evil/" }, "hello", "not a path"},
		{"reply wildcard", func(s *start) { s.Reply = "_INBOX.>" }, "hello", "reply"},
		{"reply empty token", func(s *start) { s.Reply = "_INBOX..x" }, "hello", "reply"},
		{"body longer than announced", func(s *start) { s.BodyLen = 2 }, "hello", "body of 2 bytes"},
		{"body past the limit", func(s *start) { s.BodyLen = 1 << 30 }, "hello", "past the limit"},
		{"header name", func(s *start) { s.Header["Bad Name"] = []string{"x"} }, "hello", "header name"},
		{"header value", func(s *start) { s.Header["X"] = []string{"a\r\nInjected: 1"} }, "hello", `value of header "X"`},
		{"host", func(s *start) { s.Host = "a b" }, "hello", "host"},
		{"too many headers", func(s *start) {
			for i := range maxHeaders + 1 {
				s.Header.Add("X-N", string(rune('a'+i%26)))
			}
		}, "hello", "header lines"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validStart()
			tc.mod(s)
			data, err := encodeStart(s, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got, body, err := decodeStart(data, 1<<20)
			if tc.want == "" {
				if err != nil || !reflect.DeepEqual(got, s) || string(body) != tc.body {
					t.Fatalf("decode: %+v %q %v", got, body, err)
				}
				return
			}
			if err == nil || failure.KindOf(err) != failure.Protocol || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("decode: %v, want a protocol failure with %q", err, tc.want)
			}
		})
	}
	for _, bad := range [][]byte{nil, {0xff}, {5, '{'}, {0x80, 0x80, 0x80}} {
		if _, _, err := decodeStart(bad, 1<<20); failure.KindOf(err) != failure.Protocol {
			t.Errorf("decode %q: %v, want a protocol failure", bad, err)
		}
	}
}

// TestFrames: frames round-trip, and malformed ones are refused.
func TestFrames(t *testing.T) {
	for _, f := range []*frame{
		{flags: flagHead, seq: 0, head: &head{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}}, data: []byte(": ok\n\n")},
		{flags: 0, seq: 7, data: []byte("data: x\n\n")},
		{flags: flagEnd, seq: 1 << 40},
		{flags: flagHead | flagEnd, seq: 0, head: &head{Status: 404, Header: http.Header{}}, data: []byte("session not found\n")},
	} {
		b, err := encodeFrame(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := decodeFrame(b)
		if err != nil || g.flags != f.flags || g.seq != f.seq || !bytes.Equal(g.data, f.data) || !reflect.DeepEqual(g.head, f.head) {
			t.Errorf("round trip of %+v: %+v %v", f, g, err)
		}
	}
	for _, bad := range [][]byte{nil, {8, 0}, {0}, {flagHead, 0, 50, '{'}, {flagHead, 0, 12, '{', '"', 's', 't', 'a', 't', 'u', 's', '"', ':', '9', '}'}} {
		if _, err := decodeFrame(bad); failure.KindOf(err) != failure.Protocol {
			t.Errorf("decode %q: %v, want a protocol failure", bad, err)
		}
	}
	seq, data, err := decodeChunk(encodeChunk(3, []byte("abc")))
	if err != nil || seq != 3 || string(data) != "abc" {
		t.Errorf("chunk: %d %q %v", seq, data, err)
	}
	ctl, st, _, err := decodeStartReply(append([]byte{'K'}, "_INBOX.x"...))
	if err != nil || ctl != "_INBOX.x" || st != 0 {
		t.Errorf("start reply: %q %d %v", ctl, st, err)
	}
	_, st, text, err := decodeStartReply(encodeRefusal(503, "busy"))
	if err != nil || st != 503 || text != "busy" {
		t.Errorf("refusal: %d %q %v", st, text, err)
	}
	for _, bad := range [][]byte{nil, {'K'}, {'K', '*'}, {'X', 200, 1}, {'Z'}} {
		if _, _, _, err := decodeStartReply(bad); err == nil {
			t.Errorf("start reply %q accepted", bad)
		}
	}
}

// FuzzDecodeStart: the forwarded-request decoder never panics, and what
// it accepts is within its bounds and encodes back to an equal start.
func FuzzDecodeStart(f *testing.F) {
	good, _ := encodeStart(validStart(), []byte("hello"))
	f.Add(good)
	get := validStart()
	get.Method, get.BodyLen = http.MethodGet, 0
	g, _ := encodeStart(get, nil)
	f.Add(g)
	f.Add([]byte{2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, body, err := decodeStart(data, 1<<16)
		if err != nil {
			if failure.KindOf(err) != failure.Protocol {
				t.Fatalf("a %v failure, want Protocol", failure.KindOf(err))
			}
			return
		}
		if int64(len(body)) > s.BodyLen || s.BodyLen > 1<<16 || !validSubject(s.Reply) {
			t.Fatalf("accepted out of bounds: %+v with %d bytes", s, len(body))
		}
		again, err := encodeStart(s, body)
		if err != nil {
			t.Fatal(err)
		}
		s2, body2, err := decodeStart(again, 1<<16)
		if err != nil || !reflect.DeepEqual(s, s2) || !bytes.Equal(body, body2) {
			t.Fatalf("re-encoded start differs: %+v %+v %v", s, s2, err)
		}
	})
}

// FuzzDecodeFrame: the response-frame decoder never panics and what it
// accepts round-trips.
func FuzzDecodeFrame(f *testing.F) {
	b, _ := encodeFrame(&frame{flags: flagHead, head: &head{Status: 200, Header: http.Header{"A": {"b"}}}, data: []byte("x")})
	f.Add(b)
	f.Add([]byte{flagEnd, 3, 'z'})
	f.Add([]byte{flagHead, 0, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := decodeFrame(data)
		if err != nil {
			if failure.KindOf(err) != failure.Protocol {
				t.Fatalf("a %v failure, want Protocol", failure.KindOf(err))
			}
			return
		}
		if fr.flags&flagHead != 0 && (fr.head == nil || fr.head.Status < 200 || fr.head.Status > 599) {
			t.Fatalf("accepted head %+v", fr.head)
		}
		again, err := encodeFrame(fr)
		if err != nil {
			t.Fatal(err)
		}
		fr2, err := decodeFrame(again)
		if err != nil || fr2.seq != fr.seq || fr2.flags != fr.flags || !bytes.Equal(fr2.data, fr.data) {
			t.Fatalf("re-encoded frame differs: %+v %+v %v", fr, fr2, err)
		}
	})
}
