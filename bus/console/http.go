package console

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/console/internal/ui"
	"github.com/switchboard-dev/switchboard/failure"
)

// cookieName is the cookie a ?token= link sets.
const cookieName = "switchboard_console"

// maxBody bounds a request's body.
const maxBody = 64 << 10

// heartbeat is the pause after which a live stream sends a comment, so
// that proxies keep it open.
const heartbeat = 15 * time.Second

func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(ui.FS, "static")
	files := http.FileServerFS(static)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", files))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.HandleFunc("GET /api/info", c.getInfo)
	mux.HandleFunc("GET /api/runs", c.getRuns)
	mux.HandleFunc("POST /api/runs", c.postRun)
	mux.HandleFunc("GET /api/runs/{id}", c.getRun)
	mux.HandleFunc("GET /api/runs/{id}/events", c.getRunEvents)
	mux.HandleFunc("POST /api/runs/{id}/fork", c.postFork)
	mux.HandleFunc("GET /api/runs/{id}/answers", c.getRunAnswers)
	mux.HandleFunc("GET /api/live", c.getLive)
	mux.HandleFunc("GET /api/questions", c.getQuestions)
	mux.HandleFunc("GET /api/questions/{id}/answer", c.getAnswer)
	mux.HandleFunc("POST /api/questions/{id}/answer", c.postAnswer)
	return c.guard(mux)
}

// guard admits a request: with a token, one that carries it (a bearer
// header, or the cookie a ?token= link sets); without, a loopback client
// that names a loopback host (no DNS rebinding). Requests that change
// something must carry the X-Switchboard-Console header (a cross-site page
// cannot send it without a preflight the console never grants) and, if
// they have an Origin, come from the console's own.
func (c *Console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if c.cfg.Token != "" {
			if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
				if !c.tokenOK(tok) {
					http.Error(w, "wrong token", http.StatusUnauthorized)
					return
				}
				http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true,
					SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
				http.Redirect(w, r, "/", http.StatusSeeOther)
				return
			}
			if !c.authorized(r) {
				h.Set("WWW-Authenticate", `Bearer realm="switchboard console"`)
				http.Error(w, "this console needs its token: open the link with ?token= it printed, or send Authorization: Bearer", http.StatusUnauthorized)
				return
			}
		} else if !loopback(r) {
			http.Error(w, "without a token this console answers loopback clients only", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Header.Get("X-Switchboard-Console") != "1" || !sameOrigin(r) {
				http.Error(w, "a change needs the X-Switchboard-Console header from the console's own page", http.StatusForbidden)
				return
			}
		}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			if err := c.Start(r.Context()); err != nil {
				writeErr(w, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (c *Console) tokenOK(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(c.cfg.Token)) == 1
}

func (c *Console) authorized(r *http.Request) bool {
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && c.tokenOK(strings.TrimSpace(a)) {
		return true
	}
	ck, err := r.Cookie(cookieName)
	return err == nil && c.tokenOK(ck.Value)
}

// loopback reports whether the client is on loopback and named a loopback
// host.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return false
	}
	return loopbackName(r.Host)
}

func loopbackName(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// clientOf names the client for the record of an answer.
func clientOf(r *http.Request) string { return r.RemoteAddr }

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(redactJSON(data))
}

// writeErr answers with a failure's status and model-safe message.
func writeErr(w http.ResponseWriter, err error) {
	fe := failure.From(err)
	status := http.StatusInternalServerError
	switch fe.Kind {
	case failure.NotFound:
		status = http.StatusNotFound
	case failure.InvalidArgs:
		status = http.StatusBadRequest
	case failure.Conflict:
		status = http.StatusConflict
	case failure.Budget:
		status = http.StatusTooManyRequests
	case failure.Config:
		status = http.StatusNotImplemented
	case failure.Timeout:
		status = http.StatusGatewayTimeout
	case failure.Unavailable, failure.Transient:
		status = http.StatusServiceUnavailable
	}
	msg := fe.Message
	if msg == "" {
		msg = fe.ModelText()
	}
	writeJSON(w, status, map[string]string{"error": msg, "kind": fe.Kind.String()})
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Err: err,
			Message: "the request's body is not the JSON object expected: " + err.Error()}
	}
	return nil
}

type info struct {
	Identity string   `json:"identity"`
	CanStart bool     `json:"can_start"`
	CanFork  bool     `json:"can_fork"`
	Models   []string `json:"models,omitempty"`
	Runner   string   `json:"runner,omitempty"`
	PageSize int      `json:"page_size"`
	Inbox    bool     `json:"inbox"`
}

func (c *Console) getInfo(w http.ResponseWriter, r *http.Request) {
	_, isAgent := c.cfg.Runner.(*agent.Agent)
	in := info{Identity: c.cfg.Identity, CanStart: c.cfg.Runner != nil, CanFork: c.cfg.Forker != nil || isAgent,
		Models: c.cfg.Models, PageSize: c.cfg.PageSize, Inbox: c.cfg.Inbox != nil}
	if c.cfg.Runner != nil {
		in.Runner = c.cfg.Runner.Name()
	}
	writeJSON(w, http.StatusOK, in)
}

// runsPage is a page of the runs list.
type runsPage struct {
	Runs []RunSummary `json:"runs"`
	// Next is the cursor of the next (older) page: ?before=Next (0: none).
	Next uint64 `json:"next,omitempty"`
}

func (c *Console) getRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := c.cfg.PageSize
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			writeErr(w, failure.New(failure.InvalidArgs, failure.SourceBus, "limit is a positive number"))
			return
		}
		limit = min(n, MaxPageSize)
	}
	var before uint64
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			writeErr(w, failure.New(failure.InvalidArgs, failure.SourceBus, "before is a cursor from a page's next"))
			return
		}
		before = n
	}
	runs, next, err := c.ix.page(r.Context(), before, limit)
	if err != nil {
		writeErr(w, err)
		return
	}
	if runs == nil {
		runs = []RunSummary{}
	}
	writeJSON(w, http.StatusOK, runsPage{Runs: runs, Next: next})
}

func (c *Console) getRun(w http.ResponseWriter, r *http.Request) {
	s, err := c.ix.summary(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

type startRequest struct {
	Input string `json:"input"`
}

func (c *Console) postRun(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, err)
		return
	}
	if strings.TrimSpace(req.Input) == "" {
		writeErr(w, failure.New(failure.InvalidArgs, failure.SourceBus, "the input is empty"))
		return
	}
	id, err := c.startRun(r.Context(), req.Input)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id})
}

func (c *Console) postFork(w http.ResponseWriter, r *http.Request) {
	var f Fork
	if err := decodeBody(r, &f); err != nil {
		writeErr(w, err)
		return
	}
	f.Parent = r.PathValue("id")
	id, err := c.fork(r.Context(), f)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"run": id, "fork_of": f.Parent})
}

func (c *Console) getQuestions(w http.ResponseWriter, r *http.Request) {
	qs, err := c.questions(r.Context())
	if err != nil && len(qs) == 0 {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": qs})
}

func (c *Console) getAnswer(w http.ResponseWriter, r *http.Request) {
	a := c.ix.answerOf(r.Context(), r.PathValue("id"))
	if a == nil {
		writeErr(w, failure.New(failure.NotFound, failure.SourceBus, "no answer is recorded for this question"))
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (c *Console) getRunAnswers(w http.ResponseWriter, r *http.Request) {
	as, err := c.ix.answersOf(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"answers": as})
}

type answerRequest struct {
	Action  agent.ElicitAction `json:"action"`
	Content map[string]any     `json:"content,omitempty"`
	Reason  string             `json:"reason,omitempty"`
}

func (c *Console) postAnswer(w http.ResponseWriter, r *http.Request) {
	var req answerRequest
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, err)
		return
	}
	rec, err := c.answer(r.Context(), r.PathValue("id"), agent.ElicitationResult{Action: req.Action, Content: req.Content, Reason: req.Reason}, clientOf(r))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// sseWriter writes Server-Sent Events.
type sseWriter struct {
	w http.ResponseWriter
	f *http.ResponseController
}

func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, f: http.NewResponseController(w)}
	_ = s.f.Flush()
	return s
}

// send writes one event (kind "" is a message) and flushes it.
func (s *sseWriter) send(kind string, data []byte) error {
	if kind != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", kind); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", data); err != nil {
		return err
	}
	return s.f.Flush()
}

func (s *sseWriter) ping() error {
	if _, err := fmt.Fprint(s.w, ": ping\n\n"); err != nil {
		return err
	}
	return s.f.Flush()
}

// getLive streams the runs list's and the inbox's changes.
func (c *Console) getLive(w http.ResponseWriter, r *http.Request) {
	ch, stop := c.hub.subscribe(topicRuns)
	defer stop()
	s := newSSE(w)
	if err := s.send("hello", []byte(`{}`)); err != nil {
		return
	}
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.ctx.Done():
			return
		case data, ok := <-ch:
			if !ok {
				return
			}
			if s.send("", data) != nil {
				return
			}
		case <-t.C:
			if s.ping() != nil {
				return
			}
		}
	}
}

// getRunEvents streams one run's events: those stored, then new ones, up
// to Config.MaxRunEvents (an event "cut" then says so).
func (c *Console) getRunEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	sub, err := c.cfg.Bus.SubscribeEvents(ctx, id)
	if err != nil {
		writeErr(w, err)
		return
	}
	defer sub.Close()
	s := newSSE(w)
	n := 0
	for {
		hctx, hcancel := context.WithTimeout(ctx, heartbeat)
		ev, err := sub.Next(hctx)
		hcancel()
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, failure.Timeout) || (err != nil && hctx.Err() != nil):
			if s.ping() != nil {
				return
			}
			continue
		case errors.Is(err, failure.Protocol):
			continue
		case err != nil:
			data, _ := json.Marshal(map[string]string{"error": failure.From(err).ModelText()})
			_ = s.send("failure", data)
			return
		}
		data, err := json.Marshal(ev)
		if err != nil {
			continue
		}
		if s.send("", redactJSON(data)) != nil {
			return
		}
		if n++; n >= c.cfg.MaxRunEvents {
			data, _ := json.Marshal(map[string]int{"max": c.cfg.MaxRunEvents})
			_ = s.send("cut", data)
			return
		}
	}
}
