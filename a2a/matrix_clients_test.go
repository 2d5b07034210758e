package a2a

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// The interop matrix's rows where the JS SDK's clients drive our server
// (TestInteropMatrix/their-client).

// clientRowSpec is a JS client driver run against our server.
type clientRowSpec struct {
	name   string
	script string
}

var clientRows = []clientRowSpec{
	{"js-1.0", "matrix-client-v1.mjs"},
	{"js-0.3", "matrix-client-v03.mjs"},
}

// pathRecorder counts the requests our server receives per binding.
type pathRecorder struct {
	h             http.Handler
	mu            sync.Mutex
	rest, jsonrpc int
}

func (p *pathRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/rest"):
		p.rest++
	case r.Method == http.MethodPost:
		p.jsonrpc++
	}
	p.mu.Unlock()
	p.h.ServeHTTP(w, r)
}

func (p *pathRecorder) reset() {
	p.mu.Lock()
	p.rest, p.jsonrpc = 0, 0
	p.mu.Unlock()
}

func (p *pathRecorder) counts() (rest, jsonrpc int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rest, p.jsonrpc
}

// theirClientRow turns a JS driver's report into the row's cells.
func theirClientRow(t *testing.T, binding, out string, rec *pathRecorder) {
	type result struct {
		Op          string `json:"op"`
		OK          bool   `json:"ok"`
		Unsupported string `json:"unsupported"`
		Detail      any    `json:"detail"`
	}
	results := map[string]result{}
	for _, line := range strings.Split(out, "\n") {
		var r result
		if json.Unmarshal([]byte(line), &r) == nil && r.Op != "" {
			results[r.Op] = r
		}
	}
	rest, jsonrpc := rec.counts()
	for _, op := range matrixOps {
		t.Run(op, func(t *testing.T) {
			r, ok := results[op]
			switch {
			case !ok:
				t.Fatalf("the driver did not run %s; output:\n%s", op, out)
			case r.Unsupported != "":
				t.Skip("unsupported by the peer's protocol version: " + r.Unsupported)
			}
			if op == "card" && r.OK {
				// The cells ran over the binding under test, and only it.
				if (binding == "HTTP+JSON" && (rest == 0 || jsonrpc != 0)) || (binding == "JSONRPC" && (jsonrpc == 0 || rest != 0)) {
					r.OK, r.Detail = false, fmt.Sprintf("requests: %d REST, %d JSON-RPC", rest, jsonrpc)
				}
			}
			if !r.OK {
				t.Fatalf("%v", r.Detail)
			}
		})
	}
}
