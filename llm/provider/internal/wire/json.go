package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
)

// ObjectOrEmpty returns args if it is a JSON object, else {}: the API
// requires a tool_use input to be an object, and arguments the model got
// wrong were already answered by an error tool_result.
func ObjectOrEmpty(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, args) != nil {
		return json.RawMessage("{}")
	}
	return buf.Bytes()
}

// IsSyntaxError reports whether err is a JSON decoding error of the
// input (not of the reader).
func IsSyntaxError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// JSONString is s as a JSON string.
func JSONString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// ToolSchema returns a tool's input schema, or the schema of an empty
// object for a tool that declares none.
func ToolSchema(s json.RawMessage) json.RawMessage {
	if t := strings.TrimSpace(string(s)); t == "" || t == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

// NormalizeArgs turns a provider's argument string into Args: empty means
// an empty object; anything else is kept byte for byte, malformed or not,
// so that the agent can report invalid arguments to the model.
func NormalizeArgs(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// UsesToolSearch reports whether a request defers any tool.
func UsesToolSearch(defs []llm.ToolDef) bool {
	for _, d := range defs {
		if d.Deferred {
			return true
		}
	}
	return false
}

// JoinBlocks makes one JSON array of raw blocks (nil for none).
func JoinBlocks(blocks []json.RawMessage) json.RawMessage {
	if len(blocks) == 0 {
		return nil
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, b := range blocks {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return buf.Bytes()
}
