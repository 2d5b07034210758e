// Package rawcall is the contract between the MCP gateway's served side
// (mcp/server on a stream) and the Manager's tools (package mcp) for
// forwarding a tools/call without decoding it: the served side reads the
// client's request off its line connection, checks it (permission, rate
// limit, circuit) and hands the tool the raw arguments; the tool writes
// them to its server's line connection under its own request id and
// returns the server's raw result. Neither side builds go-sdk's typed
// requests and results, which were most of a forwarded call's CPU.
package rawcall

import (
	"context"
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/switchboard-dev/switchboard/agent"
)

// Tool is an agent.Tool whose calls can be forwarded raw. The Manager's
// MCP tools are: CanForward is true while the tool's server is connected
// over a line connection (stdio or in process).
type Tool interface {
	agent.Tool
	// CanForward reports whether Forward can be used now.
	CanForward() bool
	// Forward calls the tool with args (a JSON object) as Call would,
	// bounded by the same timeouts and failing with the same errors. It
	// returns the server's result as raw JSON, or, when the result needs
	// the Manager's conversion (a declared output schema to check, or a
	// result big enough to be saved to files), the converted result.
	// hooks are called on the server connection's reading goroutine
	// before Forward returns.
	Forward(ctx context.Context, args json.RawMessage, hooks Hooks) (raw json.RawMessage, res *agent.Result, err error)
}

// Hooks are what a forwarded call hands its caller while it is in
// flight, on the server connection's reading goroutine, which reads
// nothing else from that server until a hook returns: a hook must be
// bounded (a write to a client is, by its stall bound) and copy what it
// keeps.
type Hooks struct {
	// Progress, when not nil, gets the params of each progress
	// notification the server sends for the call, in order.
	Progress func(params json.RawMessage)
	// Result, when not nil, is offered the server's result (a JSON
	// object) the moment it is read, if Forward will return it raw, and
	// after the call's last progress. It is how a gateway answers its
	// client without a hand-off to the goroutine waiting in Forward,
	// which still returns the result.
	Result func(result json.RawMessage)
}

// Fields reads the members named in names of the JSON object obj in one
// pass, into out (by position, as gjson results; a missing one does not
// Exist). ok is false when obj is not an object or names a wanted member
// twice: JSON decoders disagree on which of two wins, so a caller leaves
// such a message to the one that will act on it.
func Fields(obj []byte, names []string, out []gjson.Result) (ok bool) {
	r := gjson.ParseBytes(obj)
	if !r.IsObject() {
		return false
	}
	clear(out)
	ok = true
	r.ForEach(func(k, v gjson.Result) bool {
		for i, n := range names {
			if k.Str == n {
				if out[i].Exists() {
					ok = false
					return false
				}
				out[i] = v
			}
		}
		return true
	})
	return ok
}
