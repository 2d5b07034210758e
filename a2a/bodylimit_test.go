package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// bigBody is a JSON-RPC or REST SendMessage whose text part makes the body
// size bytes long, produced as it is read so that the test itself holds
// none of it.
type bigBody struct {
	prefix, suffix string
	size, off      int64
}

func newBigBody(rest bool, size int64) *bigBody {
	p := `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"big","role":"ROLE_USER","parts":[{"text":"`
	sfx := `"}]}}}`
	if rest {
		p = `{"message":{"messageId":"big","role":"ROLE_USER","parts":[{"text":"`
		sfx = `"}]}}`
	}
	return &bigBody{prefix: p, suffix: sfx, size: size}
}

func (b *bigBody) Read(p []byte) (int, error) {
	if b.off >= b.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && b.off < b.size {
		var c byte = 'a'
		switch {
		case b.off < int64(len(b.prefix)):
			c = b.prefix[b.off]
		case b.off >= b.size-int64(len(b.suffix)):
			c = b.suffix[b.off-(b.size-int64(len(b.suffix)))]
		}
		p[n] = c
		n++
		b.off++
	}
	return n, nil
}

// TestRequestBodyLimit: a 100 MB SendMessage, announced by Content-Length
// or chunked, is refused with 413 on both bindings, and the server
// allocates far less than the body while refusing it.
func TestRequestBodyLimit(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	const size = 100 << 20
	for _, rest := range []bool{false, true} {
		for _, chunked := range []bool{false, true} {
			name := map[bool]string{false: "JSONRPC", true: "REST"}[rest] + map[bool]string{false: "/content-length", true: "/chunked"}[chunked]
			t.Run(name, func(t *testing.T) {
				url := hs.URL + jsonrpcPath
				if rest {
					url = hs.URL + restPath + "/message:send"
				}
				body := newBigBody(rest, size)
				req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, body)
				if err != nil {
					t.Fatal(err)
				}
				req.ContentLength = size
				if chunked {
					req.ContentLength = -1
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("A2A-Version", "1.0")
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				resp, err := hs.Client().Do(req)
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				runtime.ReadMemStats(&after)
				if resp.StatusCode != http.StatusRequestEntityTooLarge {
					t.Fatalf("status %d, want 413: %s", resp.StatusCode, firstLine(string(out)))
				}
				if !strings.Contains(string(out), "4194304 bytes") {
					t.Errorf("the answer does not name the limit: %s", firstLine(string(out)))
				}
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
					t.Errorf("refusing a %d MB body allocated %d MB", size>>20, grew>>20)
				}
			})
		}
	}
}

// TestRequestBodyLimitAllowsLegalRequests: bodies within the limits are
// served, a configured limit is honoured, and JSON nested too deep or
// holding too many values is refused before it is decoded.
func TestRequestBodyLimitAllowsLegalRequests(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	_, small := newWorker(t, ServerConfig{MaxRequestBytes: 1000})
	deep := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"d","role":"ROLE_USER","parts":[{"data":` +
		strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}]}}}`
	many := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"n","role":"ROLE_USER","parts":[{"data":[` +
		strings.Repeat("0,", 150_000) + `0]}]}}}`
	tests := []struct {
		name   string
		url    string
		body   string
		status int
		want   string
	}{
		{"1 MiB text", hs.URL + jsonrpcPath, rpcText(strings.Repeat("x", 1<<20)), 200, "TASK_STATE_COMPLETED"},
		{"data part nested 10 deep", hs.URL + jsonrpcPath, strings.Replace(deep, strings.Repeat("[", 100)+strings.Repeat("]", 100),
			strings.Repeat("[", 10)+strings.Repeat("]", 10), 1), 200, "TASK_STATE_COMPLETED"},
		{"nested 100 deep", hs.URL + jsonrpcPath, deep, 413, "nested deeper than 64"},
		{"150,000 values", hs.URL + jsonrpcPath, many, 413, "more than 100000 values"},
		{"configured limit, within", small.URL + jsonrpcPath, rpcText("hi"), 200, "TASK_STATE_COMPLETED"},
		{"configured limit, over", small.URL + jsonrpcPath, rpcText(strings.Repeat("x", 1000)), 413, "limit of 1000 bytes"},
		{"configured limit, REST", small.URL + restPath + "/message:send",
			`{"message":{"messageId":"r","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 1000) + `"}]}}`, 413, "limit of 1000 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, tc.url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(out), tc.want) {
				t.Fatalf("status %d %s, want %d with %q", resp.StatusCode, firstLine(string(out)), tc.status, tc.want)
			}
			if tc.status == 413 {
				var e struct {
					Error struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				if json.Unmarshal(out, &e) != nil || e.Error.Message == "" {
					t.Errorf("413 without an error body: %s", out)
				}
			}
		})
	}
}

func rpcText(text string) string {
	b, _ := json.Marshal(text)
	return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"t","role":"ROLE_USER","parts":[{"text":` + string(b) + `}]}}}`
}

func TestCheckJSONShape(t *testing.T) {
	tests := []struct {
		name string
		in   string
		err  bool
	}{
		{"empty", ``, false},
		{"flat", `{"a":1,"b":[true,null,"x"]}`, false},
		{"brackets in strings do not nest", `{"a":"` + strings.Repeat("[", 200) + `"}`, false},
		{"escaped quote", `{"a":"\"[[[[","b":1}`, false},
		{"64 deep", strings.Repeat("[", 64) + strings.Repeat("]", 64), false},
		{"65 deep", strings.Repeat("[", 65) + strings.Repeat("]", 65), true},
		{"100000 values", "[" + strings.Repeat("1,", 99_998) + "1]", false},
		{"100001 values", "[" + strings.Repeat("1,", 99_999) + "1]", true},
		{"malformed is left to the decoder", `{"a":`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkJSONShape([]byte(tc.in))
			if (err != nil) != tc.err || (err != nil && !errors.Is(err, errJSONShape)) {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
		})
	}
}

// FuzzCheckJSONShape: the scan never panics, and whatever it accepts that
// encoding/json decodes nests at most maxJSONDepth levels.
func FuzzCheckJSONShape(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":"c\"]"}]}`, `[[[[]]]]`, `"\\"`, `nul`, strings.Repeat("[", 70)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkJSONShape(b) != nil {
			return
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		if d := jsonDepth(v); d > maxJSONDepth {
			t.Fatalf("accepted %q nested %d deep", b, d)
		}
		if !bytes.Contains(b, []byte("[")) && !bytes.Contains(b, []byte("{")) && jsonDepth(v) != 0 {
			t.Fatalf("depth of a scalar")
		}
	})
}

func jsonDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, jsonDepth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, jsonDepth(e))
		}
		return d + 1
	}
	return 0
}
