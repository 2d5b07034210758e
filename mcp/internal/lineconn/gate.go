package lineconn

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// noBatchesFrom is the first protocol revision without JSON-RPC batches.
const noBatchesFrom = "2025-06-18"

// versionGate learns a connection's protocol revision from its handshake
// (the answer to initialize, or to server/discover), whichever end wrote
// it, and refuses JSON-RPC batches from 2025-06-18 on, as the
// specification and go-sdk's stream connection do.
//
// go-sdk's own connection learns the revision only at the server's end
// (it refuses batches to a server once initialize negotiated 2025-06-18 or
// later); this one refuses them at both ends, and for the 2026-07-28
// handshake too.
type versionGate struct {
	waiting atomic.Bool // a handshake request awaits its answer
	mu      sync.Mutex
	id      jsonrpc.ID // that request's
	method  string
	version string
}

// saw notes a message written or read.
func (g *versionGate) saw(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.ID.IsValid() && (m.Method == "initialize" || m.Method == "server/discover") {
			g.mu.Lock()
			g.id, g.method = m.ID, m.Method
			g.waiting.Store(true)
			g.mu.Unlock()
		}
	case *jsonrpc.Response:
		if g.waiting.Load() {
			g.answered(m)
		}
	}
}

func (g *versionGate) answered(resp *jsonrpc.Response) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if resp.ID != g.id {
		return
	}
	g.waiting.Store(false)
	if resp.Error != nil {
		return
	}
	var r struct {
		ProtocolVersion   string   `json:"protocolVersion"`
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(resp.Result, &r) != nil {
		return
	}
	switch {
	case g.method == "initialize" && r.ProtocolVersion != "":
		g.version = r.ProtocolVersion
	case g.method == "server/discover" && len(r.SupportedVersions) > 0:
		// go-sdk goes on with server/discover only with 2026-07-28 or
		// later, and falls back to initialize (seen above) otherwise.
		if v := slices.Max(r.SupportedVersions); v >= "2026-07-28" {
			g.version = v
		}
	}
}

// allowBatch returns the error go-sdk gives a batch under the negotiated
// revision, or nil where batches are allowed.
func (g *versionGate) allowBatch() error {
	g.mu.Lock()
	v := g.version
	g.mu.Unlock()
	if v >= noBatchesFrom {
		return fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", noBatchesFrom, v)
	}
	return nil
}
