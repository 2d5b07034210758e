package lineconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestDecodeMessage(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	tests := []struct {
		name string
		in   string
		want jsonrpc.Message
		err  string // a fragment of the error, when it fails
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
			&jsonrpc.Request{ID: id(float64(1)), Method: "tools/call", Params: json.RawMessage(`{"name":"echo"}`)}, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
			&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progress":1}`)}, ""},
		{"string ID and spaces", " {\n \"id\" : \"a\\\"b\" , \"method\":\"ping\",\"jsonrpc\":\"2.0\"}\n",
			&jsonrpc.Request{ID: id(`a"b`), Method: "ping"}, ""},
		{"escaped method", `{"jsonrpc":"2.0","method":"tools\/list","id":2}`, &jsonrpc.Request{ID: id(float64(2)), Method: "tools/list"}, ""},
		{"null method is a request named \"\"", `{"jsonrpc":"2.0","method":null,"id":2}`, &jsonrpc.Request{ID: id(float64(2))}, ""},
		{"result", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
			&jsonrpc.Response{ID: id(float64(7)), Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)}, ""},
		{"error", `{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad \u00e9","data":[1]}}`,
			&jsonrpc.Response{ID: id("x"), Error: &jsonrpc.Error{Code: -32602, Message: "bad é", Data: json.RawMessage(`[1]`)}}, ""},
		{"fractional ID truncates, as in go-sdk", `{"jsonrpc":"2.0","id":3.7,"result":1}`, &jsonrpc.Response{ID: id(float64(3)), Result: json.RawMessage(`1`)}, ""},
		{"the last of repeated keys wins", `{"jsonrpc":"2.0","id":1,"id":2,"result":true}`, &jsonrpc.Response{ID: id(float64(2)), Result: json.RawMessage(`true`)}, ""},
		{"keys in other case are ignored", `{"jsonrpc":"2.0","id":1,"Method":"x","result":1}`, &jsonrpc.Response{ID: id(float64(1)), Result: json.RawMessage(`1`)}, ""},

		{"no version", `{"id":1,"result":1}`, nil, `version tag is "", not "2.0"`},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"result":1}`, nil, `version tag is "1.0"`},
		{"version in other case", `{"JSONRPC":"2.0","id":1,"result":1}`, nil, `version tag is ""`},
		{"numeric version", `{"jsonrpc":2,"id":1,"result":1}`, nil, "the version tag"},
		{"response without ID", `{"jsonrpc":"2.0","result":1}`, nil, "a response has no ID"},
		{"response with null ID", `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`, nil, "a response has no ID"},
		{"boolean ID", `{"jsonrpc":"2.0","id":true,"result":1}`, nil, "invalid ID type bool"},
		{"object ID", `{"jsonrpc":"2.0","id":{},"result":1}`, nil, "invalid ID type"},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":3}`, nil, "the method"},
		{"fractional error code", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, nil, "the error code"},
		{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, nil, "not a JSON object"},
		{"array", `[1]`, nil, "not a JSON object"},
		{"invalid JSON", `{"jsonrpc":"2.0",`, nil, "unexpected end of JSON input"},
		{"garbage", `Listening on port 3000`, nil, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeMessage([]byte(tt.in), false)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, errBadMessage) {
					t.Fatalf("got %#v, %v; want an error saying %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
			if err := sameAsGoSDK([]byte(tt.in)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestDecodeFrame(t *testing.T) {
	tests := []struct {
		in    string
		n     int
		batch bool
		err   string
	}{
		{`{"jsonrpc":"2.0","method":"ping"}`, 1, false, ""},
		{` [{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]`, 2, true, ""},
		{`[]`, 0, true, "the batch is empty"},
		{`[{"jsonrpc":"2.0","method":"a"},{"id":1}]`, 0, true, "version tag"},
		{`[1,`, 0, true, "decoding a JSON-RPC batch"},
	}
	for _, tt := range tests {
		msgs, batch, err := decodeFrame([]byte(tt.in), false)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: got %v, want an error saying %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || len(msgs) != tt.n || batch != tt.batch {
			t.Errorf("%s: got %d messages, batch %v, %v", tt.in, len(msgs), batch, err)
		}
	}
}

// sameAsGoSDK checks that decodeMessage accepts what go-sdk's
// jsonrpc.DecodeMessage accepts, and decodes it alike.
func sameAsGoSDK(data []byte) error {
	ours, err1 := decodeMessage(data, false)
	theirs, err2 := jsonrpc.DecodeMessage(data)
	if (err1 == nil) != (err2 == nil) {
		return fmt.Errorf("%q: ours %v, go-sdk's %v", data, err1, err2)
	}
	if err1 != nil {
		return nil
	}
	if !reflect.DeepEqual(normal(ours), normal(theirs)) {
		return fmt.Errorf("%q:\nours   %#v\ngo-sdk %#v", data, ours, theirs)
	}
	return nil
}

// normal makes raw values comparable: a present but empty raw value and
// an absent one alike, and an error's empty data too.
func normal(m jsonrpc.Message) jsonrpc.Message {
	switch m := m.(type) {
	case *jsonrpc.Request:
		c := *m
		if len(c.Params) == 0 {
			c.Params = nil
		}
		return &c
	case *jsonrpc.Response:
		c := *m
		if len(c.Result) == 0 {
			c.Result = nil
		}
		if we, ok := c.Error.(*jsonrpc.Error); ok {
			e := *we
			if len(e.Data) == 0 {
				e.Data = nil
			}
			c.Error = &e
		}
		return &c
	}
	return m
}

// FuzzDecodeMessage: no input panics the decoder, and on valid JSON it
// agrees with go-sdk's decoder.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":null}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[{"jsonrpc":"2.0","method":"a"}]`,
		`{"jsonrpc":"2.0","id":1e3,"result":"\ud800"}`,
		`{"Jsonrpc":"2.0","ID":1,"Result":1}`,
		`{}`, `[]`, `null`, `"x"`, `{"jsonrpc":"2.0","id":-0,"method":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, _, err := decodeFrame(data, false)
		if err == nil && len(msgs) == 0 {
			t.Fatalf("%q: no message and no error", data)
		}
		if !json.Valid(data) || bytes.HasPrefix(trimSpace(data), []byte("[")) {
			return
		}
		if err := sameAsGoSDK(data); err != nil {
			t.Fatal(err)
		}
	})
}
