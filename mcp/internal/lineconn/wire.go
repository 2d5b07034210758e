package lineconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeFrame decodes one frame of a JSON-RPC stream: a message, or a
// batch (an array of them, reported by batch). valid says data is known
// to be valid JSON (the frame reader checked it).
func decodeFrame(data []byte, valid bool) (msgs []jsonrpc.Message, batch bool, err error) {
	data = trimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, true, fmt.Errorf("decoding a JSON-RPC batch: %w", err)
		}
		if len(raws) == 0 {
			return nil, true, errors.New("decoding a JSON-RPC batch: the batch is empty")
		}
		msgs = make([]jsonrpc.Message, len(raws))
		for i, raw := range raws {
			if msgs[i], err = decodeMessage(raw, true); err != nil {
				return nil, true, err
			}
		}
		return msgs, true, nil
	}
	msg, err := decodeMessage(data, valid)
	if err != nil {
		return nil, false, err
	}
	return []jsonrpc.Message{msg}, false, nil
}

// errBadMessage is wrapped by every decoding failure of one message.
var errBadMessage = errors.New("decoding a JSON-RPC message")

// decodeMessage decodes one JSON-RPC 2.0 message with the rules of
// go-sdk's jsonrpc.DecodeMessage: keys match exactly (a "Method" is not a
// "method"), the version tag must be "2.0", an ID is a string, a number
// or absent, a message with a "method" key is a request (a notification
// without an ID) and any other a response, which must have an ID. The
// params, result and error data alias data, which the caller must not
// reuse.
//
// It exists because go-sdk's decoder allocates a 32 KiB buffer for each
// value it decodes: here one validating pass and a scan of the top-level
// keys do the work, and only the small values are decoded.
//
// valid says data is known to be valid JSON (else it is checked).
func decodeMessage(data []byte, valid bool) (jsonrpc.Message, error) {
	if !valid && !json.Valid(data) {
		// Let encoding/json say where the input goes wrong.
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, fmt.Errorf("%w: %w", errBadMessage, err)
	}
	var version, id, method, params, result, errObj []byte
	err := eachMember(data, func(key, value []byte) {
		switch string(key) {
		case "jsonrpc":
			version = value
		case "id":
			id = value
		case "method":
			method = value
		case "params":
			params = value
		case "result":
			result = value
		case "error":
			errObj = value
		}
	})
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(version, []byte(`"2.0"`)) {
		var v string
		if version != nil {
			if err := unmarshalString(version, &v); err != nil {
				return nil, fmt.Errorf("%w: the version tag: %w", errBadMessage, err)
			}
		}
		if v != "2.0" {
			return nil, fmt.Errorf("%w: the version tag is %q, not \"2.0\"", errBadMessage, v)
		}
	}
	mid, err := decodeID(id)
	if err != nil {
		return nil, err
	}
	if method != nil {
		var name string
		if err := unmarshalString(method, &name); err != nil {
			return nil, fmt.Errorf("%w: the method: %w", errBadMessage, err)
		}
		return &jsonrpc.Request{ID: mid, Method: name, Params: json.RawMessage(params)}, nil
	}
	if !mid.IsValid() {
		return nil, fmt.Errorf("%w: a response has no ID", errBadMessage)
	}
	resp := &jsonrpc.Response{ID: mid, Result: json.RawMessage(result)}
	if errObj != nil && !isNull(errObj) {
		we, err := decodeWireError(errObj)
		if err != nil {
			return nil, err
		}
		resp.Error = we
	}
	return resp, nil
}

// decodeID decodes a message's ID as go-sdk does: a number goes through
// float64 to int64 (3.7 is 3), a string stays one, null or no ID is the
// zero ID, and anything else is an error.
func decodeID(v []byte) (jsonrpc.ID, error) {
	var raw any
	switch {
	case v == nil || isNull(v):
	case v[0] == '"':
		var s string
		if err := unmarshalString(v, &s); err != nil {
			return jsonrpc.ID{}, fmt.Errorf("%w: the ID: %w", errBadMessage, err)
		}
		raw = s
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return jsonrpc.ID{}, fmt.Errorf("%w: the ID %s is out of range", errBadMessage, v)
		}
		raw = f
	default:
		if err := json.Unmarshal(v, &raw); err != nil {
			return jsonrpc.ID{}, fmt.Errorf("%w: the ID: %w", errBadMessage, err)
		}
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil {
		return jsonrpc.ID{}, fmt.Errorf("%w: %w", errBadMessage, err)
	}
	return id, nil
}

// decodeWireError decodes a response's error object, its keys matched
// exactly.
func decodeWireError(data []byte) (*jsonrpc.Error, error) {
	we := &jsonrpc.Error{}
	var code, message, errData []byte
	err := eachMember(data, func(key, value []byte) {
		switch string(key) {
		case "code":
			code = value
		case "message":
			message = value
		case "data":
			errData = value
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%w: the error: %w", errBadMessage, err)
	}
	if code != nil {
		if err := json.Unmarshal(code, &we.Code); err != nil {
			return nil, fmt.Errorf("%w: the error code: %w", errBadMessage, err)
		}
	}
	if message != nil {
		if err := unmarshalString(message, &we.Message); err != nil {
			return nil, fmt.Errorf("%w: the error message: %w", errBadMessage, err)
		}
	}
	if errData != nil {
		we.Data = json.RawMessage(errData)
	}
	return we, nil
}

// eachMember calls fn with each member of the JSON object data (valid
// JSON, checked by the caller), in order: the key unquoted (and
// unescaped), the value's bytes as they are. A later member with the same key comes later, so
// the last one wins, as in encoding/json.
func eachMember(data []byte, fn func(key, value []byte)) error {
	data = trimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", errBadMessage)
	}
	i := skipSpace(data, 1)
	if data[i] == '}' {
		return nil
	}
	for {
		end := skipValue(data, i) // the key, a string
		k := data[i+1 : end-1]
		if bytes.IndexByte(k, '\\') >= 0 {
			var unq string
			if err := json.Unmarshal(data[i:end], &unq); err != nil {
				return fmt.Errorf("%w: a key: %w", errBadMessage, err)
			}
			k = []byte(unq)
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the colon
		end = skipValue(data, i)
		fn(k, data[i:end])
		i = skipSpace(data, end)
		if data[i] == '}' {
			return nil
		}
		i = skipSpace(data, i+1) // the comma
	}
}

// skipValue returns the index just past the JSON value that starts at
// data[i] (valid JSON).
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		for i++; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipValue(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	default: // a number, true, false or null
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
		}
		return i
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func trimSpace(data []byte) []byte {
	i, j := 0, len(data)
	for i < j && isSpace(data[i]) {
		i++
	}
	for j > i && isSpace(data[j-1]) {
		j--
	}
	return data[i:j]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isNull(v []byte) bool { return bytes.Equal(v, []byte("null")) }

// unmarshalString decodes a JSON string (or null, as ""), without
// encoding/json for one with no escapes.
func unmarshalString(v []byte, dst *string) error {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 && asciiPrintable(v[1:len(v)-1]) {
		*dst = string(v[1 : len(v)-1])
		return nil
	}
	if isNull(v) {
		*dst = ""
		return nil
	}
	return json.Unmarshal(v, dst)
}

// asciiPrintable reports whether b is printable ASCII, which a JSON
// string holds unchanged.
func asciiPrintable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
