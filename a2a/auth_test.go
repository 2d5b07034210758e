package a2a

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func authServer(t *testing.T, extra ServerConfig) string {
	extra.Auth = &Auth{
		APIKeys:      map[string]string{"key-alice": "alice"},
		BearerTokens: map[string]string{"tok-bob": "bob", "tok-mallory": "mallory"},
		Authorize:    func(_ *http.Request, caller string) bool { return caller != "mallory" },
	}
	_, hs := newWorker(t, extra)
	return hs.URL
}

// TestAuth covers AUTH-SERVER-002 (every operation authenticated) with
// clear 401 and 403 answers on both bindings.
func TestAuth_AUTH_SERVER_002(t *testing.T) {
	base := authServer(t, ServerConfig{})
	tests := []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"no credentials", nil, 401},
		{"wrong bearer", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"wrong api key", map[string]string{"X-API-Key": "nope"}, 401},
		{"refused caller", map[string]string{"Authorization": "Bearer tok-mallory"}, 403},
		{"bearer", map[string]string{"Authorization": "Bearer tok-bob"}, 200},
		// The scheme name is case-insensitive (RFC 9110 11.1, RFC 6750 2.1).
		{"bearer lower case", map[string]string{"Authorization": "bearer tok-bob"}, 200},
		{"bearer upper case", map[string]string{"Authorization": "BEARER tok-bob"}, 200},
		{"bearer two spaces", map[string]string{"Authorization": "Bearer  tok-bob"}, 200},
		{"bearer no token", map[string]string{"Authorization": "bearer"}, 401},
		{"basic scheme", map[string]string{"Authorization": "Basic tok-bob"}, 401},
		{"scheme glued to token", map[string]string{"Authorization": "Bearertok-bob"}, 401},
		{"api key", map[string]string{"X-API-Key": "key-alice"}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"A2A-Version": "1.0"}
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			resp, out := rawPost(t, base+jsonrpcPath, hdr, rpcSend)
			if resp.StatusCode != tc.status {
				t.Fatalf("JSON-RPC status %d, want %d (%v)", resp.StatusCode, tc.status, out)
			}
			if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if tc.status != 200 {
				e, _ := out["error"].(map[string]any)
				if e == nil || e["message"] == "" {
					t.Errorf("no JSON-RPC error body: %v", out)
				}
			}
			resp, _ = rawPost(t, base+restPath+"/message:send", hdr, `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`)
			if resp.StatusCode != tc.status {
				t.Fatalf("REST status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	t.Run("card is public", func(t *testing.T) {
		resp, err := http.Get(base + cardPath)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		resp.Body.Close()
	})
}

// TestAuthScope covers AUTH-SCOPE-001/002/003 and CORE-LIST-001: tasks are
// scoped to their owner and hidden from others.
func TestAuthScope_AUTH_SCOPE_002_003_CORE_LIST_001(t *testing.T) {
	base := authServer(t, ServerConfig{})
	ctx := ctxT(t)
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			alice := clientFor(t, base, b, http.Header{"X-Api-Key": {"key-alice"}})
			bob := clientFor(t, base, b, http.Header{"Authorization": {"Bearer tok-bob"}})
			res, err := alice.SendMessage(ctx, textMsg("hello"))
			if err != nil {
				t.Fatal(err)
			}
			id := res.(*a2ago.Task).ID
			if _, err := bob.GetTask(ctx, &a2ago.GetTaskRequest{ID: id}); !errors.Is(err, a2ago.ErrTaskNotFound) {
				t.Errorf("bob sees alice's task: %v", err)
			}
			if _, err := bob.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id}); !errors.Is(err, a2ago.ErrTaskNotFound) {
				t.Errorf("bob cancels alice's task: %v", err)
			}
			l, err := bob.ListTasks(ctx, &a2ago.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range l.Tasks {
				if tk.ID == id {
					t.Error("bob lists alice's task")
				}
			}
			l, err = alice.ListTasks(ctx, &a2ago.ListTasksRequest{})
			if err != nil || len(l.Tasks) == 0 {
				t.Fatalf("alice's list = %v, %v", l, err)
			}
		})
	}
}

// TestExtendedCard covers CARD-EXT-001: the extended card needs
// authentication and is served to authenticated callers.
func TestExtendedCard_CARD_EXT_001(t *testing.T) {
	ext := &a2ago.AgentCard{Name: "worker (extended)", Description: "more", Version: "1",
		SupportedInterfaces: []*a2ago.AgentInterface{{URL: "http://example.com", ProtocolBinding: a2ago.TransportProtocolJSONRPC, ProtocolVersion: "1.0"}}}
	base := authServer(t, ServerConfig{ExtendedCard: ext})
	ctx := ctxT(t)
	for _, b := range bindings {
		c := clientFor(t, base, b, http.Header{"Authorization": {"Bearer tok-bob"}})
		card, err := c.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{})
		if err != nil || card.Name != "worker (extended)" {
			t.Fatalf("%s: %v %v", b, card, err)
		}
	}
	resp, _ := rawPost(t, base+jsonrpcPath, map[string]string{"A2A-Version": "1.0"},
		`{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`)
	if resp.StatusCode != 401 {
		t.Fatalf("anonymous extended card: %d", resp.StatusCode)
	}
}

// TestWrongCredentials: a peer refusing our credentials is a typed
// PermissionDenied failure, not a retry loop or a hang.
func TestWrongCredentials(t *testing.T) {
	base := authServer(t, ServerConfig{})
	t.Setenv("SB_TEST_TOKEN", "not-the-token")
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: base, BearerTokenEnv: "SB_TEST_TOKEN"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctx)
	_, err = tools[0].Call(ctx, []byte(`{"message":"hi"}`))
	if !errors.Is(err, failure.PermissionDenied) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(failure.From(err).ModelText(), "not-the-token") {
		t.Fatal("the token leaked into the model's text")
	}
	t.Setenv("SB_TEST_TOKEN", "tok-bob")
	ts2, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: base, BearerTokenEnv: "SB_TEST_TOKEN"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts2.Close()
	tools, _ = ts2.Tools(ctx)
	if _, err := tools[0].Call(ctx, []byte(`{"message":"hi"}`)); err != nil {
		t.Fatal(err)
	}
}

// TestPushConfigs covers PUSH-CREATE-001/002, PUSH-GET-001/002,
// PUSH-LIST-001, PUSH-DEL-001/002 and PUSH-DELIVER-001/002/003.
func TestPushConfigs_PUSH_CREATE_GET_LIST_DEL_DELIVER(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var tokens []string
	hook := newHookServer(t, func(body, token string) {
		mu.Lock()
		got = append(got, body)
		tokens = append(tokens, token)
		mu.Unlock()
	})
	_, hs := newWorker(t, ServerConfig{PushNotifications: true, AllowPrivatePush: true})
	ctx := ctxT(t)
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := clientFor(t, hs.URL, b, nil)
			id := slowTask(t, ctx, c)
			pc, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, URL: hook, Token: "secret-token"})
			if err != nil || pc.ID == "" {
				t.Fatalf("create = %+v, %v", pc, err)
			}
			g, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: id, ID: pc.ID})
			if err != nil || g.URL != hook {
				t.Fatalf("get = %+v, %v", g, err)
			}
			if _, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: id, ID: "nope"}); err == nil {
				t.Error("PUSH-GET-002: unknown config found")
			}
			l, err := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: id})
			if err != nil || len(l) != 1 {
				t.Fatalf("list = %v, %v", l, err)
			}
			if _, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id}); err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, 20*time.Second, "PUSH-DELIVER-002: a delivery of the cancellation", func() bool {
				mu.Lock()
				defer mu.Unlock()
				for _, body := range got {
					if strings.Contains(body, string(id)) && strings.Contains(body, "TASK_STATE_CANCELED") {
						return true
					}
				}
				return false
			})
			mu.Lock()
			for _, tok := range tokens {
				if tok != "secret-token" {
					t.Errorf("PUSH-DELIVER-001: token header %q", tok)
				}
			}
			mu.Unlock()
			if err := c.DeleteTaskPushConfig(ctx, &a2ago.DeleteTaskPushConfigRequest{TaskID: id, ID: pc.ID}); err != nil {
				t.Fatal(err)
			}
			if err := c.DeleteTaskPushConfig(ctx, &a2ago.DeleteTaskPushConfigRequest{TaskID: id, ID: pc.ID}); err != nil {
				t.Errorf("PUSH-DEL-002: second delete: %v", err)
			}
			if l, _ := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: id}); len(l) != 0 {
				t.Errorf("PUSH-DEL-001: configs remain: %v", l)
			}
		})
	}
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPushRefusesPrivateTargets: without AllowPrivatePush, push configs
// aimed at loopback, link-local, unspecified or private addresses are
// refused when they are set, on both bindings, whether created or sent with
// a message, with an InvalidParams error naming the rule.
func TestPushRefusesPrivateTargets(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{PushNotifications: true})
	ctx := ctxT(t)
	targets := []struct{ url, rule string }{
		{"http://127.0.0.1:8080/hook", "loopback"},
		{"http://localhost/hook", "loopback"},
		{"http://[::1]/hook", "loopback"},
		{"http://169.254.169.254/latest/meta-data", "link-local"},
		{"http://0.0.0.0/hook", "unspecified"},
		{"http://10.1.2.3/hook", "private"},
		{"https://192.168.0.10/hook", "private"},
		{"http://[::ffff:127.0.0.1]/hook", "loopback"},
		{"ftp://example.com/hook", "not an absolute http or https URL"},
	}
	for _, b := range bindings {
		c := clientFor(t, hs.URL, b, nil)
		id := slowTask(t, ctx, c)
		for _, tc := range targets {
			t.Run(string(b)+"/create/"+tc.url, func(t *testing.T) {
				_, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, URL: tc.url})
				if !errors.Is(err, a2ago.ErrInvalidParams) || !strings.Contains(err.Error(), tc.rule) {
					t.Fatalf("err = %v, want InvalidParams naming %q", err, tc.rule)
				}
			})
			t.Run(string(b)+"/with message/"+tc.url, func(t *testing.T) {
				m := textMsg("hello")
				m.Config = &a2ago.SendMessageConfig{PushConfig: &a2ago.PushConfig{URL: tc.url}}
				_, err := c.SendMessage(ctx, m)
				if !errors.Is(err, a2ago.ErrInvalidParams) || !strings.Contains(err.Error(), tc.rule) {
					t.Fatalf("err = %v, want InvalidParams naming %q", err, tc.rule)
				}
			})
		}
		if l, err := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: id}); err != nil || len(l) != 0 {
			t.Errorf("refused configs were stored: %v, %v", l, err)
		}
		pc, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, URL: "https://192.0.2.1/hook"}) // TEST-NET-1
		if err != nil {
			t.Fatalf("a public address was refused: %v", err)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2ago.DeleteTaskPushConfigRequest{TaskID: id, ID: pc.ID}); err != nil { // nothing is sent there
			t.Fatal(err)
		}
		if _, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPushRefusedAtDelivery: a config that reached the store without the
// set-time check (set by a replica allowed to, or a name that resolved
// elsewhere then) is still refused when delivered, and the task completes.
func TestPushRefusedAtDelivery(t *testing.T) {
	var mu sync.Mutex
	got := 0
	hook := newHookServer(t, func(string, string) { mu.Lock(); got++; mu.Unlock() })
	var logs lockedBuffer
	log := zerolog.New(&logs)
	pushes := push.NewInMemoryStore()
	_, hs := newWorker(t, ServerConfig{PushNotifications: true, PushStore: pushes, Logger: &log})
	ctx := ctxT(t)
	c := clientFor(t, hs.URL, a2ago.TransportProtocolJSONRPC, nil)
	id := slowTask(t, ctx, c)
	if _, err := pushes.Save(ctx, id, &a2ago.PushConfig{URL: hook, Token: "t"}); err != nil {
		t.Fatal(err)
	}
	ct, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id})
	if err != nil || ct.Status.State != a2ago.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", ct, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 0 {
		t.Fatalf("%d deliveries reached a loopback webhook", got)
	}
	if !strings.Contains(logs.String(), "blocked address range") {
		t.Fatalf("no refused delivery logged:\n%s", logs.String())
	}
}

func TestPushGuardResolvesNames(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "metadata.example":
			return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("169.254.169.254")}, nil
		case "public.example":
			return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
		}
		return nil, errors.New("no such host")
	}
	tests := []struct {
		url   string
		allow bool
		rule  string // "" accepted
	}{
		{"https://metadata.example/x", false, "resolves to 169.254.169.254: it is a link-local address"},
		{"https://public.example/x", false, ""},
		{"https://unresolvable.example/x", false, ""}, // checked again at delivery
		{"https://app.localhost/x", false, "loopback"},
		{"http://127.0.0.1/x", true, ""},
		{"https://metadata.example/x", true, ""},
		{"not a url", true, "not an absolute http or https URL"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			err := pushGuard{allowPrivate: tc.allow, lookup: lookup}.check(context.Background(), tc.url)
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Kind != failure.InvalidArgs || !errors.Is(err, a2ago.ErrInvalidParams) || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("err = %v, want InvalidArgs naming %q", err, tc.rule)
			}
		})
	}
}

// FuzzPushGuard: the set-time check never panics, and a URL it accepts
// (names resolving nowhere) never has a loopback, private, link-local or
// unspecified address literal as its host.
func FuzzPushGuard(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1/x", "https://[::1]:8443/", "http://169.254.169.254", "https://example.com/hook",
		"http://0/", "http://[::ffff:10.0.0.1]/", "http://LOCALHOST./", "ftp://x", "http://%31%32%37.0.0.1/", "http://[fe80::1%25eth0]/",
		"http://127.1:8080/", "http://2130706433/", "http://0x7f.1/", "http://[::127.0.0.1]/"} {
		f.Add(s)
	}
	none := func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }
	f.Fuzz(func(t *testing.T, raw string) {
		if (pushGuard{lookup: none}).check(context.Background(), raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted an unparsable URL %q", raw)
		}
		if ip, ok := hostAddr(strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")); ok && blockedRule(ip) != "" {
			t.Fatalf("accepted %q (host %s)", raw, ip)
		}
	})
}

// TestPushConfigsBounded: a task takes at most maxPushConfigs push
// configs (each event is delivered to every one in turn); replacing one by
// its id is still allowed.
func TestPushConfigsBounded(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{PushNotifications: true})
	ctx := ctxT(t)
	c := clientFor(t, hs.URL, bindings[0], nil)
	id := slowTask(t, ctx, c)
	var first string
	for i := range maxPushConfigs {
		pc, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, URL: fmt.Sprintf("https://192.0.2.1/hook%d", i)})
		if err != nil {
			t.Fatalf("config %d: %v", i, err)
		}
		if i == 0 {
			first = pc.ID
		}
	}
	if _, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, URL: "https://192.0.2.1/one-more"}); !errors.Is(err, a2ago.ErrInvalidParams) {
		t.Fatalf("config %d: %v, want InvalidParams", maxPushConfigs+1, err)
	}
	if _, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, ID: first, URL: "https://192.0.2.1/replaced"}); err != nil {
		t.Fatalf("replacing a config: %v", err)
	}
	if _, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id}); err != nil {
		t.Fatal(err)
	}
}

// TestPushGuardSpellings (issue 35, item 5): every spelling of a blocked
// address that resolvers read as that address is refused when the push
// config is set; http://127.1:P/ and http://2130706433:P/ were accepted.
func TestPushGuardSpellings(t *testing.T) {
	none := func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }
	tests := []struct {
		host string
		rule string // "" accepted
	}{
		{"127.0.0.1", "loopback"},
		{"127.1", "127.1 is the address 127.0.0.1: it is a loopback"},
		{"127.0.1", "loopback"},
		{"2130706433", "the address 127.0.0.1"},
		{"0x7f000001", "the address 127.0.0.1"},
		{"0x7f.1", "the address 127.0.0.1"},
		{"0177.0.0.1", "the address 127.0.0.1"},
		{"0177.1", "the address 127.0.0.1"},
		{"017700000001", "the address 127.0.0.1"},
		{"127.0.0.1.", "loopback"},
		{"127.1.", "the address 127.0.0.1"},
		{"0", "unspecified"},
		{"0.0.0.0", "unspecified"},
		{"0x0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"2852039166", "the address 169.254.169.254: it is a link-local"},
		{"0xa9fea9fe", "link-local"},
		{"0251.0376.0251.0376", "link-local"},
		{"169.254.43518", "link-local"},
		{"10.1", "the address 10.0.0.1: it is a private"},
		{"167772161", "private"},
		{"192.168.257", "the address 192.168.1.1: it is a private"},
		{"[::1]", "loopback"},
		{"[::ffff:127.0.0.1]", "loopback"},
		{"[::ffff:7f00:1]", "loopback"},
		{"[0:0:0:0:0:ffff:7f00:1]", "loopback"},
		{"[::127.0.0.1]", "loopback"},
		{"[::ffff:a9fe:a9fe]", "link-local"},
		{"[64:ff9b::a9fe:a9fe]", "link-local"},
		{"[fe80::1%25eth0]", "link-local"},
		{"[fc00::1]", "private"},
		{"LOCALHOST.", "localhost"},
		// Public addresses, in any spelling, and names are accepted.
		{"93.184.215.14", ""},
		{"1572395790", ""}, // 93.184.215.14
		{"0x5db8d70e", ""},
		{"[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", ""},
		{"[::ffff:5db8:d70e]", ""},
		{"example.com", ""},
		{"0x7g000001", ""},   // not a number: a name, left to the delivery check
		{"08.0.0.1", ""},     // not octal: a name
		{"1.2.3.4.5", ""},    // five parts: a name
		{"127.0.0.256", ""},  // out of range: not an address
		{"4294967296", ""},   // past 32 bits: not an address
		{"127.16777216", ""}, // the last part past 24 bits
		{"1e2.example", ""},  // a name
	}
	for _, tc := range tests {
		for _, port := range []string{"", ":8080"} {
			raw := "http://" + tc.host + port + "/hook"
			t.Run(raw, func(t *testing.T) {
				err := pushGuard{lookup: none}.check(context.Background(), raw)
				if tc.rule == "" {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				var fe *failure.Error
				if !errors.As(err, &fe) || fe.Kind != failure.InvalidArgs || !strings.Contains(err.Error(), tc.rule) {
					t.Fatalf("err = %v, want InvalidArgs naming %q", err, tc.rule)
				}
			})
		}
	}
}
