package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
)

// binding names a protocol binding, for answers written outside a2a-go.
type binding int

const (
	bindingJSONRPC binding = iota
	bindingREST
)

// parseVersion parses an A2A-Version header value into major and minor.
// Patch numbers are ignored (VER-CLIENT-002); an empty value means 0.3
// (VER-SERVER-003).
func parseVersion(v string) (major, minor int, err error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, 3, nil
	}
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	parts := strings.Split(v, ".")
	if len(parts) > 3 || len(v) > 32 {
		return 0, 0, fmt.Errorf("malformed A2A-Version %q", v)
	}
	nums := make([]int, 2)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 1000 {
			return 0, 0, fmt.Errorf("malformed A2A-Version %q", v)
		}
		if i < 2 {
			nums[i] = n
		}
	}
	return nums[0], nums[1], nil
}

// versioned dispatches on the A2A-Version header, which a2a-go ignores: 1.x
// to the 1.0 binding, 0.3 (or no header) to a2a-go's 0.3 compatibility
// binding, anything else to the protocol's VersionNotSupportedError.
func versioned(b binding, v1, v03 http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vals := r.Header.Values(a2ago.SvcParamVersion)
		raw := ""
		if len(vals) > 0 {
			raw = vals[0]
		}
		major, minor, err := parseVersion(raw)
		switch {
		case err == nil && major == 1:
			v1.ServeHTTP(w, r)
		case err == nil && major == 0 && minor == 3:
			v03.ServeHTTP(w, r)
		default:
			writeProtocolError(w, r, b, a2ago.ErrVersionNotSupported,
				fmt.Sprintf("A2A-Version %q is not supported; this agent speaks 1.0 and 0.3", raw))
		}
	})
}

// protocolError describes an error the wrappers answer in the binding's
// own format.
type protocolError struct {
	code   int // JSON-RPC code
	status int // HTTP status
	grpc   string
	reason string
}

var protocolErrors = map[error]protocolError{
	a2ago.ErrVersionNotSupported: {-32009, http.StatusBadRequest, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"},
	a2ago.ErrUnauthenticated:     {-31401, http.StatusUnauthorized, "UNAUTHENTICATED", "UNAUTHENTICATED"},
	a2ago.ErrUnauthorized:        {-31403, http.StatusForbidden, "PERMISSION_DENIED", "UNAUTHORIZED"},
}

// maxIDPeek bounds how much of a JSON-RPC body is read to echo its id.
const maxIDPeek = 64 << 10

// writeProtocolError writes err as a JSON-RPC error object (echoing the
// request id) or as an AIP-193 error with an ErrorInfo detail.
func writeProtocolError(w http.ResponseWriter, r *http.Request, b binding, err error, msg string) {
	pe := protocolErrors[err]
	if b == bindingJSONRPC {
		var id any
		if r.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(r.Body, maxIDPeek))
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(bytes.TrimSpace(body), &req) == nil && len(req.ID) > 0 {
				id = req.ID
			}
		}
		w.Header().Set("Content-Type", "application/json")
		status := http.StatusOK
		if pe.status == http.StatusUnauthorized || pe.status == http.StatusForbidden {
			status = pe.status
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
			"code": pe.code, "message": msg,
			"data": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": pe.reason, "domain": a2ago.ProtocolDomain}},
		}})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(pe.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": pe.status, "status": pe.grpc, "message": msg,
		"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": pe.reason, "domain": a2ago.ProtocolDomain}},
	}})
}
