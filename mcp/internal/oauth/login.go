package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
)

// CallbackPath is the path of the loopback listener's redirect endpoint.
const CallbackPath = "/callback"

// maxPending bounds the logins waiting for their redirect.
const maxPending = 256

// Logins holds the logins waiting for their redirect, by state, and the
// loopback listeners that receive them. It is an http.Handler for hosts
// that receive the redirect on their own server.
type Logins struct {
	log zerolog.Logger

	mu        sync.Mutex
	pending   map[string]chan callback
	listeners map[int]*loopback
	closed    bool
}

type callback struct {
	code, state, iss string
	err, desc        string
}

type loopback struct {
	srv *http.Server
	url string
	wg  sync.WaitGroup
}

// NewLogins returns an empty registry.
func NewLogins(log zerolog.Logger) *Logins {
	return &Logins{log: log, pending: map[string]chan callback{}, listeners: map[int]*loopback{}}
}

// ServeHTTP receives an authorization server's redirect: the login whose
// state it carries gets the code (or the error), any other state is
// refused.
func (l *Logins) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cb := callback{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss"), err: q.Get("error"), desc: q.Get("error_description")}
	l.mu.Lock()
	ch := l.pending[cb.state]
	if ch != nil {
		delete(l.pending, cb.state)
	}
	l.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if ch == nil || cb.state == "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprint(w, "<!doctype html><title>Login</title><p>This login is unknown or has expired. Start again from the application.")
		return
	}
	ch <- cb // buffered: one slot, and the entry was removed
	msg := "You are signed in. You can close this window."
	if cb.err != "" {
		msg = "The sign-in did not complete (" + html.EscapeString(cb.err) + "). You can close this window."
	}
	_, _ = fmt.Fprintf(w, "<!doctype html><title>Login</title><p>%s", msg)
}

// Loopback starts, once per port, a listener on 127.0.0.1 (port 0: one
// shared listener on a port the system picks) and returns its redirect
// URL. Listeners stay up until Close, so a redirect URL registered with an
// authorization server keeps working.
func (l *Logins) Loopback(port int) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return "", errors.New("closed")
	}
	if lb := l.listeners[port]; lb != nil {
		return lb.url, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return "", fmt.Errorf("the loopback listener for the login redirect could not start: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(CallbackPath, l)
	lb := &loopback{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10},
		url: loopbackURL(port, ln.Addr().(*net.TCPAddr).Port)}
	lb.wg.Add(1)
	go func() {
		defer lb.wg.Done()
		_ = lb.srv.Serve(ln)
	}()
	l.listeners[port] = lb
	return lb.url, nil
}

// loopbackURL is the redirect URL of a loopback listener: a configured
// port is spelled with localhost (as Claude Code registers it), a port
// the system picked with 127.0.0.1, which authorization servers match
// whatever the port (RFC 8252, section 7.3).
func loopbackURL(configured, actual int) string {
	host := "127.0.0.1"
	if configured != 0 {
		host = "localhost"
	}
	return "http://" + host + ":" + strconv.Itoa(actual) + CallbackPath
}

// Close stops the listeners and fails the pending logins.
func (l *Logins) Close() {
	l.mu.Lock()
	l.closed = true
	lbs := l.listeners
	l.listeners = map[int]*loopback{}
	l.mu.Unlock()
	for _, lb := range lbs {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = lb.srv.Shutdown(ctx)
		cancel()
		_ = lb.srv.Close()
		lb.wg.Wait()
	}
}

func (l *Logins) register(state string) (chan callback, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errors.New("the manager is closed")
	}
	if len(l.pending) >= maxPending {
		return nil, fmt.Errorf("too many logins are waiting (%d)", maxPending)
	}
	ch := make(chan callback, 1)
	l.pending[state] = ch
	return ch, nil
}

func (l *Logins) unregister(state string) {
	l.mu.Lock()
	delete(l.pending, state)
	l.mu.Unlock()
}

// Answer is a person's answer to the login question.
type Answer struct {
	Accepted bool
	Reason   string
}

// Asker shows the authorization URL to a person (the agent's Elicitor in
// URL mode) and returns their answer. Accepting means they went to the
// URL; the login completes when the redirect arrives.
type Asker func(ctx context.Context, user, authURL string) (Answer, error)

// login runs the person path for one authorization URL: the question goes
// to the person, the redirect is awaited, both within timeout.
func (l *Logins) login(ctx context.Context, ferr func(failure.Kind, string, error) error, ask Asker, user, authURL string, timeout time.Duration) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, ferr(failure.Internal, "the authorization URL is malformed", err)
	}
	state := u.Query().Get("state")
	if state == "" {
		return nil, ferr(failure.Internal, "the authorization URL has no state", nil)
	}
	ch, err := l.register(state)
	if err != nil {
		return nil, ferr(failure.Unavailable, "the login could not start", err)
	}
	defer l.unregister(state)
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type asked struct {
		a   Answer
		err error
	}
	answers := make(chan asked, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a, err := ask(lctx, user, authURL)
		answers <- asked{a, err}
	}()
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: the question is withdrawn
	for {
		select {
		case cb := <-ch:
			if cb.err != "" {
				if cb.err == "access_denied" {
					return nil, ferr(failure.Declined, "the person declined the login at the authorization server", nil)
				}
				return nil, ferr(failure.PermissionDenied, "the authorization server refused the login ("+cb.err+")", nil)
			}
			if cb.state != state {
				return nil, ferr(failure.PermissionDenied, "the login's redirect carried another state", nil)
			}
			return &auth.AuthorizationResult{Code: cb.code, State: cb.state, Iss: cb.iss}, nil
		case a := <-answers:
			answers = nil
			if a.err != nil {
				if lctx.Err() != nil {
					continue // the deadline case reports it
				}
				return nil, ferr(failure.From(a.err).Kind, "nobody could be asked to log in", a.err)
			}
			if !a.a.Accepted {
				msg := "the person declined the login"
				if a.a.Reason != "" {
					msg += ": " + a.a.Reason
				}
				return nil, ferr(failure.Declined, msg, nil)
			}
		case <-lctx.Done():
			if ctx.Err() != nil {
				return nil, ferr(failure.Canceled, "the login was cancelled", ctx.Err())
			}
			return nil, ferr(failure.Timeout, fmt.Sprintf("the login did not complete within %s", timeout), lctx.Err())
		}
	}
}
