package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStoreKey(t *testing.T) {
	tests := []struct{ server, user, want string }{
		{"api", "", "api.u"},
		{"api", "alice", "api.ualice"},
		{"a.b", "c", "a=2Eb.uc"},
		{"a", "b.uc", "a.ub=2Euc"},
		{"x", "é/", "x.u=C3A9=2F"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := storeKey(tt.server, tt.user)
		if got != tt.want {
			t.Errorf("storeKey(%q, %q) = %q, want %q", tt.server, tt.user, got, tt.want)
		}
		if seen[got] {
			t.Errorf("key %q made twice", got)
		}
		seen[got] = true
	}
}

// TestRefreshMargin: a token is refreshed a quarter of its lifetime (at
// most a minute) before it expires, and a refused refresh forgets it.
func TestRefreshMargin(t *testing.T) {
	now := time.Unix(1000, 0)
	tests := []struct {
		name    string
		life    time.Duration
		elapsed time.Duration
		want    bool
	}{
		{"fresh", time.Hour, time.Minute, false},
		{"last minute", time.Hour, 59*time.Minute + time.Second, true},
		{"short, early", 4 * time.Second, 2 * time.Second, false},
		{"short, last quarter", 4 * time.Second, 3*time.Second + time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := &tokenSource{rec: &record{V: 1, Obtained: now, Token: &oauth2.Token{AccessToken: "a", Expiry: now.Add(tt.life)}},
				now: func() time.Time { return now.Add(tt.elapsed) }}
			if got := ts.expiring(ts.rec.Token); got != tt.want {
				t.Errorf("expiring = %v, want %v", got, tt.want)
			}
		})
	}
	dropped := false
	ts := &tokenSource{rec: &record{V: 1, Obtained: now, Token: &oauth2.Token{AccessToken: "a", RefreshToken: "r", Expiry: now}},
		now: func() time.Time { return now }, timeout: time.Second, log: zerolog.Nop(), drop: func() { dropped = true },
		refresh: func(context.Context, *oauth2.Token) (*oauth2.Token, error) {
			return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant"}
		}}
	if _, err := ts.Token(); err == nil || !dropped || ts.current() != nil {
		t.Errorf("refused refresh: err %v, dropped %v", err, dropped)
	}
}

func TestSealer(t *testing.T) {
	s, err := NewSealer(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal("k1", []byte("secret token"))
	if bytes.Contains(sealed, []byte("secret token")) {
		t.Fatal("sealed data holds the clear text")
	}
	if b, err := s.Open("k1", sealed); err != nil || string(b) != "secret token" {
		t.Fatalf("open: %q, %v", b, err)
	}
	if _, err := s.Open("k2", sealed); err == nil {
		t.Error("a record moved to another key opened")
	}
	for _, bad := range [][]byte{nil, []byte("sb1:"), []byte("plain json"), sealed[:len(sealed)-1]} {
		if _, err := s.Open("k1", bad); err == nil {
			t.Errorf("opened %q", bad)
		}
	}
	if _, err := NewSealer(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key was accepted")
	}
}

// TestCallback: the redirect reaches the login of its state only; an
// unknown state is refused.
func TestCallback(t *testing.T) {
	l := NewLogins(zerolog.Nop())
	defer l.Close()
	redirect, err := l.Loopback(0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(redirect, "http://127.0.0.1:") {
		t.Fatalf("redirect %q", redirect)
	}
	get := func(q string) int {
		resp, err := http.Get(redirect + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("code=c&state=nobody"); code != http.StatusBadRequest {
		t.Errorf("unknown state: %d", code)
	}
	ferr := func(k failure.Kind, msg string, err error) error {
		return &failure.Error{Kind: k, Source: failure.SourceMCP, Message: msg, Err: err}
	}
	tests := []struct {
		name  string
		query string
		ask   Answer
		want  failure.Kind
	}{
		{"code", "code=c1&state=S", Answer{Accepted: true}, 0},
		{"denied", "error=access_denied&state=S", Answer{Accepted: true}, failure.Declined},
		{"declined", "", Answer{Accepted: false}, failure.Declined},
		{"expired", "", Answer{Accepted: true}, failure.Timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ask := func(ctx context.Context, _, _ string) (Answer, error) {
				if tt.query != "" {
					if code := get(tt.query); code != http.StatusOK {
						t.Errorf("callback answered %d", code)
					}
				}
				return tt.ask, nil
			}
			res, err := l.login(context.Background(), ferr, ask, "", "https://as.example/authorize?state=S", 200*time.Millisecond)
			if tt.want == 0 {
				if err != nil || res.Code != "c1" || res.State != "S" {
					t.Fatalf("login: %+v, %v", res, err)
				}
				return
			}
			if failure.From(err).Kind != tt.want {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
}

// FuzzOpenRecord: whatever a store returns, opening and decoding it fails
// cleanly or yields a usable record; sealed records round-trip.
func FuzzOpenRecord(f *testing.F) {
	s, _ := NewSealer(bytes.Repeat([]byte{3}, 32))
	good, _ := json.Marshal(&record{V: 1, Token: &oauth2.Token{AccessToken: "a", RefreshToken: "r"}, TokenURL: "https://as/token"})
	f.Add(good)
	f.Add(s.Seal("k", good))
	f.Add([]byte(`{"v":1,"token":{}}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte("sb1:\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := decodeRecord(b); err == nil && (r.Token == nil || r.V != 1) {
			t.Fatalf("decoded an unusable record %+v", r)
		}
		if out, err := s.Open("k", b); err == nil {
			if _, err := decodeRecord(out); err != nil && bytes.Equal(b, s.Seal("k", out)) {
				t.Fatal("unreachable")
			}
		}
		sealed := s.Seal("k", b)
		if out, err := s.Open("k", sealed); err != nil || !bytes.Equal(out, b) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
