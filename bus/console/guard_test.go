package console_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/bus/console"
)

func TestGuard(t *testing.T) {
	open := newEnv(t, console.Config{})
	locked := newEnv(t, console.Config{Token: "s3cret-token"})
	tests := []struct {
		name   string
		e      *env
		method string
		target string
		remote string
		host   string
		header map[string]string
		status int
	}{
		{"loopback without token", open, "GET", "/api/info", "127.0.0.1:5000", "127.0.0.1:7070", nil, 200},
		{"localhost name", open, "GET", "/api/info", "[::1]:5000", "localhost:7070", nil, 200},
		{"remote client without token", open, "GET", "/api/info", "10.1.2.3:5000", "127.0.0.1:7070", nil, 403},
		{"rebinding host without token", open, "GET", "/api/info", "127.0.0.1:5000", "evil.example:7070", nil, 403},
		{"page", open, "GET", "/", "127.0.0.1:5000", "127.0.0.1", nil, 200},
		{"asset", open, "GET", "/assets/js/app.js", "127.0.0.1:5000", "127.0.0.1", nil, 200},
		{"change without the console header", open, "POST", "/api/runs", "127.0.0.1:5000", "127.0.0.1", nil, 403},
		{"change from another origin", open, "POST", "/api/runs", "127.0.0.1:5000", "127.0.0.1",
			map[string]string{"X-Switchboard-Console": "1", "Origin": "http://evil.example"}, 403},
		{"token missing", locked, "GET", "/api/info", "10.1.2.3:5000", "console.example", nil, 401},
		{"token wrong", locked, "GET", "/api/info", "10.1.2.3:5000", "console.example", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"bearer token", locked, "GET", "/api/info", "10.1.2.3:5000", "console.example", map[string]string{"Authorization": "Bearer s3cret-token"}, 200},
		{"cookie token", locked, "GET", "/api/info", "10.1.2.3:5000", "console.example", map[string]string{"Cookie": "switchboard_console=s3cret-token"}, 200},
		{"token link", locked, "GET", "/?token=s3cret-token", "10.1.2.3:5000", "console.example", nil, 303},
		{"wrong token link", locked, "GET", "/?token=nope", "10.1.2.3:5000", "console.example", nil, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(tt.e.ctx, tt.method, tt.target, strings.NewReader(`{"input":"x"}`))
			req.RemoteAddr, req.Host = tt.remote, tt.host
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			tt.e.c.Handler().ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status == 303 {
				ck := rec.Result().Cookies()
				if len(ck) != 1 || ck[0].Value != "s3cret-token" || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
					t.Errorf("cookie = %+v", ck)
				}
			}
			if rec.Header().Get("Content-Security-Policy") == "" {
				t.Error("no Content-Security-Policy")
			}
		})
	}
}
