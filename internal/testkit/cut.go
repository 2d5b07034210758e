package testkit

import (
	"bytes"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// CutProxy is a reverse proxy in front of a Streamable HTTP endpoint that
// cuts the first POST response stream right after it passed on a frame
// holding Marker (as a network or a load balancer dropping a connection
// mid-call would), and counts the requests that resume a stream (a GET
// with Last-Event-ID).
type CutProxy struct {
	// URL is the proxy's endpoint.
	URL string
	// Cut is closed once a stream was cut.
	Cut chan struct{}
	// Resumes counts the GET requests with Last-Event-ID.
	Resumes atomic.Int32

	proxy *httputil.ReverseProxy
	once  sync.Once
}

// NewCutProxy serves a CutProxy to backend (an http URL) until the test
// ends.
func NewCutProxy(t testing.TB, backend, marker string) *CutProxy {
	t.Helper()
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	c := &CutProxy{Cut: make(chan struct{}), proxy: httputil.NewSingleHostReverseProxy(u)}
	c.proxy.FlushInterval = -1
	c.proxy.ErrorLog = log.New(io.Discard, "", 0) // the cut is logged as an abort
	c.proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method == http.MethodPost && r.Header.Get("Content-Type") == "text/event-stream" {
			r.Body = &cutBody{ReadCloser: r.Body, c: c, marker: []byte(marker)}
		}
		return nil
	}
	hs := httptest.NewServer(c)
	t.Cleanup(hs.Close)
	c.URL = hs.URL + u.Path
	return c
}

// ServeHTTP proxies r.
func (c *CutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		c.Resumes.Add(1)
	}
	_ = http.NewResponseController(w).EnableFullDuplex() // golang/go#40747
	c.proxy.ServeHTTP(w, r)
}

// cutBody passes a response stream on until it has passed the marker, and
// then fails its next read (on the first such stream only).
type cutBody struct {
	io.ReadCloser
	c      *CutProxy
	marker []byte
	seen   bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.seen {
		cutNow := false
		b.c.once.Do(func() { cutNow = true })
		if cutNow {
			close(b.c.Cut)
			return 0, errors.New("cut by the test")
		}
	}
	n, err := b.ReadCloser.Read(p)
	if bytes.Contains(p[:n], b.marker) {
		b.seen = true
	}
	return n, err
}
