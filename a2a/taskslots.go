package a2a

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/failure"
)

// The default bounds of the tasks a server runs at once.
const (
	defaultMaxTasks          = 256
	defaultMaxTasksPerCaller = 16
)

// ErrTaskBound is in the chain of the error refusing a message that would
// start a task past ServerConfig.MaxTasks or MaxTasksPerCaller (with
// a2a-go's ErrServerError, which JSON-RPC answers as -32000): a binding
// that has a code of its own for it (a2a/grpc: ResourceExhausted) finds
// it with errors.Is.
var ErrTaskBound = errors.New("a2a: a task bound is reached")

// taskBound is the cause of a refusal past a task bound: it is a2a-go's
// ErrServerError (and reads as it) and ErrTaskBound.
type taskBound struct{}

func (taskBound) Error() string { return a2ago.ErrServerError.Error() }

func (taskBound) Is(target error) bool {
	return target == ErrTaskBound || target == a2ago.ErrServerError
}

// taskSlots bounds the tasks a server runs at once, in all and per caller
// (ServerConfig.MaxTasks and MaxTasksPerCaller). A slot is taken when a
// message starts an execution and given back when the execution ends,
// whether or not its client is still connected.
type taskSlots struct {
	max, perCaller int // <= 0: no bound

	mu       sync.Mutex
	n        int
	byCaller map[string]int
}

func newTaskSlots(max, perCaller int) *taskSlots {
	return &taskSlots{max: max, perCaller: perCaller, byCaller: map[string]int{}}
}

// acquire takes a slot for caller ("" counts only toward the server's
// bound) and returns its release, or an error naming the bound reached.
func (t *taskSlots) acquire(caller string) (func(), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	busy := func(msg string) error {
		return &failure.Error{Kind: failure.Transient, Source: failure.SourceA2A, Op: "send message", Retryable: true,
			Message: msg + "; retry when one of the running tasks has ended", Err: taskBound{}}
	}
	if t.max > 0 && t.n >= t.max {
		return nil, busy(fmt.Sprintf("the server runs at most %d tasks at once (ServerConfig.MaxTasks)", t.max))
	}
	if caller != "" && t.perCaller > 0 && t.byCaller[caller] >= t.perCaller {
		return nil, busy(fmt.Sprintf("a caller may run at most %d tasks at once on this server (ServerConfig.MaxTasksPerCaller)", t.perCaller))
	}
	t.n++
	if caller != "" {
		t.byCaller[caller]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.n--
			if caller == "" {
				return
			}
			if t.byCaller[caller]--; t.byCaller[caller] <= 0 {
				delete(t.byCaller, caller)
			}
		})
	}, nil
}

// running returns how many tasks hold a slot.
func (t *taskSlots) running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

type peerKey struct{}

// peerOf names the client of remote address addr: its IPv4 address, or
// the /64 of its IPv6 address (one host holds a whole /64, and would
// otherwise get MaxTasksPerCaller for each of its addresses).
func peerOf(addr string) string {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return addr
		}
		return host
	}
	ip := ap.Addr().Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

// withPeer records the client's address in the request's context: the
// caller of an unauthenticated request, for MaxTasksPerCaller.
func withPeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithRemoteAddr(r.Context(), r.RemoteAddr)))
	})
}

// WithRemoteAddr returns ctx naming addr (host:port, as net.Addr.String
// gives it) as the network address of the client of a request that
// another binding than the Server's HTTP handler (package a2a/grpc) hands
// to [Server.RequestHandler]: without a [Caller], MaxTasksPerCaller counts
// the client's tasks by its IPv4 address or IPv6 /64, with those it runs
// over HTTP from there. An empty addr leaves ctx as it is.
func WithRemoteAddr(ctx context.Context, addr string) context.Context {
	if host := peerOf(addr); host != "" {
		return context.WithValue(ctx, peerKey{}, host)
	}
	return ctx
}

// slotOwner names the caller of a request for MaxTasksPerCaller: the
// authenticated caller, else the client's IP address, else "" (a request
// through RequestHandler that names neither, WithCaller or WithRemoteAddr:
// only MaxTasks applies).
func slotOwner(ctx context.Context) string {
	if c, ok := Caller(ctx); ok && c != "" {
		return "caller:" + c
	}
	if ip, ok := ctx.Value(peerKey{}).(string); ok {
		return "ip:" + ip
	}
	return ""
}
