package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
)

// The bounds on the shape of one request's JSON, on every binding (over
// gRPC, package a2a/grpc measures a message as its JSON form nests and
// counts).
const (
	// MaxRequestDepth bounds the nesting of a request's JSON: objects and
	// arrays within each other.
	MaxRequestDepth = 64
	// MaxRequestValues bounds the number of JSON values (objects, arrays,
	// strings and keys, numbers, literals) in one request, which bounds
	// what decoding and handling it allocate.
	MaxRequestValues = 100_000
)

// Bounds on one request to the server.
const (
	// defaultMaxRequestBytes is ServerConfig.MaxRequestBytes' default.
	defaultMaxRequestBytes = 4 << 20
	maxJSONDepth           = MaxRequestDepth
	maxJSONValues          = MaxRequestValues
)

// errJSONShape is a request whose JSON is nested too deep or holds too
// many values.
var errJSONShape = errors.New("request JSON too large")

// limitBody refuses request bodies over limit bytes with 413, before
// reading them when Content-Length says so and while reading otherwise,
// and refuses JSON nested deeper than maxJSONDepth or holding more than
// maxJSONValues values; the body reaches next fully read.
func limitBody(b binding, limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			tooLarge(w, b, limit)
			return
		}
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		size := r.ContentLength
		if size < 0 || size > 64<<10 {
			size = 64 << 10 // grown while reading: a lying or absent length costs no more than it sends
		}
		buf := bytes.NewBuffer(make([]byte, 0, size+1))
		_, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
		if err != nil {
			writeRequestError(w, b, http.StatusBadRequest, a2ago.ErrInvalidRequest, "the request body could not be read")
			return
		}
		if int64(buf.Len()) > limit {
			tooLarge(w, b, limit)
			return
		}
		if err := checkJSONShape(buf.Bytes()); err != nil {
			writeRequestError(w, b, http.StatusRequestEntityTooLarge, a2ago.ErrInvalidRequest, err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(buf.Bytes()))
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, b binding, limit int64) {
	w.Header().Set("Connection", "close") // the rest of the body is not read
	writeRequestError(w, b, http.StatusRequestEntityTooLarge, a2ago.ErrInvalidRequest,
		"the request body is larger than the server's limit of "+strconv.FormatInt(limit, 10)+" bytes")
}

// writeRequestError answers a request refused before a2a-go saw it: a
// JSON-RPC error (id null: the body was not read) or an AIP-193 error,
// both with the HTTP status given.
func writeRequestError(w http.ResponseWriter, b binding, status int, err error, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if b == bindingJSONRPC {
		code := -32600
		if errors.Is(err, a2ago.ErrParseError) {
			code = -32700
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": code, "message": msg}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": status, "status": "INVALID_ARGUMENT", "message": msg}})
}

// checkJSONShape scans JSON text without decoding it and refuses nesting
// deeper than maxJSONDepth and more than maxJSONValues values. Malformed
// JSON is left for the decoder to report.
func checkJSONShape(b []byte) error {
	depth, values := 0, 0
	inString, escaped, inScalar := false, false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString, inScalar = true, false
			values++
		case '{', '[':
			inScalar = false
			depth++
			values++
			if depth > maxJSONDepth {
				return fmt.Errorf("%w: nested deeper than %d levels", errJSONShape, maxJSONDepth)
			}
		case '}', ']':
			inScalar = false
			depth--
		case ',', ':', ' ', '\t', '\n', '\r':
			inScalar = false
		default:
			if !inScalar { // a number or literal starts
				inScalar = true
				values++
			}
		}
		if values > maxJSONValues {
			return fmt.Errorf("%w: more than %d values", errJSONShape, maxJSONValues)
		}
	}
	return nil
}
