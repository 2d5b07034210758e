package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// Task status notifications (SEP-2663): a client that sends a
// subscriptions/listen naming task ids (notifications.taskIds) is sent a
// notifications/tasks, the task as tasks/get answers it, at each change of
// a task's status (working, input_required, completed, failed,
// cancelled), on the listen's stream.
//
// go-sdk v1.8.0 serves subscriptions/listen itself: it decodes the filter
// into its own type, which drops taskIds, acknowledges only its own kinds
// of notification and ends the listen at once when none is asked for; and
// a server cannot send a notification go-sdk does not know
// (go-sdk#745). So the listen is served beside it where the transport is
// ours, over Streamable HTTP (listenTasks, in Handler): a listen whose
// filter asks for task ids alone is answered by this handler, as an event
// stream, before go-sdk sees it. A listen over another transport, or one
// that also asks for go-sdk's notifications, is go-sdk's: its
// acknowledgement names no task, and the client polls.

// Bounds of a listen served here.
const (
	maxListenBody  = 1 << 20
	maxListenTasks = 64
)

// listenTasks serves a subscriptions/listen for task status notifications
// before next (go-sdk's handler).
func (s *Server) listenTasks(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxListenBody+1))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		if err != nil || len(body) > maxListenBody || !bytes.Contains(body, []byte(taskwire.MethodListen)) {
			next.ServeHTTP(w, r)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta          map[string]any             `json:"_meta"`
				Notifications map[string]json.RawMessage `json:"notifications"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil || req.Method != taskwire.MethodListen || len(req.ID) == 0 || req.ID[0] == 'n' {
			next.ServeHTTP(w, r)
			return
		}
		raw, ok := req.Params.Notifications["taskIds"]
		var ids []string
		if !ok || len(req.Params.Notifications) != 1 || json.Unmarshal(raw, &ids) != nil {
			next.ServeHTTP(w, r) // go-sdk's kinds of notification: its listen
			return
		}
		if rebound(r) {
			// go-sdk's DNS-rebinding protection, which this listen bypasses.
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		var ss *gomcp.ServerSession // the session before 2026-07-28: capabilities at initialize
		if _, perRequest := req.Params.Meta[gomcp.MetaKeyClientCapabilities]; !perRequest {
			if ss = s.sessionOf(r.Header.Get("Mcp-Session-Id")); ss == nil {
				next.ServeHTTP(w, r) // no such session: go-sdk's answer
				return
			}
		}
		if !declaredTasks(ss, req.Params.Meta) {
			writeRPCError(w, req.ID, errMissingTasks)
			return
		}
		s.serveListen(w, r, req.ID, ids, taskOwner(&gomcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context())}))
	})
}

// rebound reports whether r reached a loopback address under a Host that
// is not one: a DNS-rebinding attack on a local server, which go-sdk's
// handler refuses (403).
func rebound(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && loopback(local.String()) && !loopback(r.Host)
}

// loopback reports whether a host (with or without a port) is a loopback
// address or localhost.
func loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// sessionOf is the live session of id ("" or unknown: nil).
func (s *Server) sessionOf(id string) *gomcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// writeRPCError answers the request id with e.
func writeRPCError(w http.ResponseWriter, id json.RawMessage, e *jsonrpc.Error) {
	raw, _ := json.Marshal(map[string]any{"code": e.Code, "message": e.Message, "data": e.Data})
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":%s}`, id, raw)
}

// serveListen streams the status notifications of the tasks among ids
// that run in this process and belong to owner (those it agreed to, named
// in its acknowledgement), until they have all ended, the client goes or
// the server closes; then the listen's result ends the stream.
func (s *Server) serveListen(w http.ResponseWriter, r *http.Request, id json.RawMessage, ids []string, owner string) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeRPCError(w, id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the response cannot stream"})
		return
	}
	wake := make(chan struct{}, 1)
	live := map[string]*liveTask{}
	sent := map[string]string{} // what was last sent of each task
	for _, tid := range ids {
		if len(live) >= maxListenTasks {
			break
		}
		v, ok := s.tasks.Load(tid)
		if !ok {
			continue // ended, or not here: a poll tells
		}
		lt := v.(*liveTask)
		if lt.snapshot().Owner != owner {
			continue
		}
		live[tid] = lt
		defer lt.subscribe(wake)()
	}
	meta := map[string]any{gomcp.MetaKeySubscriptionID: id}
	agreed := slices.Sorted(maps.Keys(live))
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event := func(msg any) bool {
		raw, err := json.Marshal(msg)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", raw); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	if !event(map[string]any{"jsonrpc": "2.0", "method": taskwire.NotificationAck, "params": map[string]any{
		"notifications": taskwire.TaskSubscriptions{TaskIDs: agreed}, "_meta": meta}}) {
		return
	}
	// The status now, then each change: a change between the client's
	// last poll and the subscription is not missed. A change since the
	// subscription may have filled wake already; the status is sent once
	// either way (a blocking send here would wait forever).
	select {
	case wake <- struct{}{}:
	default:
	}
	for len(live) > 0 {
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			live = nil
			continue
		}
		for tid, lt := range live {
			st := lt.snapshot().Task
			mark := string(st.Status) + " " + st.LastUpdatedAt + " " + fmt.Sprint(slices.Sorted(maps.Keys(st.InputRequests)))
			if sent[tid] != mark {
				sent[tid] = mark
				params, _ := json.Marshal(st)
				var p map[string]any
				_ = json.Unmarshal(params, &p)
				p["_meta"] = meta
				if !event(map[string]any{"jsonrpc": "2.0", "method": taskwire.NotificationTasks, "params": p}) {
					return
				}
			}
			if st.Status.Terminal() {
				delete(live, tid)
			}
		}
	}
	event(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"resultType": taskwire.ResultComplete, "_meta": meta}})
}
