package a2a

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/failure"
)

// pushResolveTimeout bounds the name lookup of a webhook set by a client.
const pushResolveTimeout = 3 * time.Second

// pushGuard refuses, when a push config is set, webhooks that point at
// loopback, link-local (cloud metadata at 169.254.169.254), unspecified,
// multicast or private addresses, unless allowPrivate (ServerConfig
// AllowPrivatePush). Deliveries are checked again when they dial (a2a-go's
// SSRF-guarded sender), since a name may resolve differently later; a name
// that does not resolve now is left to that check.
type pushGuard struct {
	allowPrivate bool
	lookup       func(ctx context.Context, host string) ([]netip.Addr, error)
}

func (g pushGuard) check(ctx context.Context, raw string) error {
	refuse := func(rule string) error {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceA2A, Op: "set push config",
			Message: fmt.Sprintf("push notification URL %q refused: %s", raw, rule), Err: a2ago.ErrInvalidParams}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return refuse("it is not an absolute http or https URL")
	}
	if g.allowPrivate {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return refuse("localhost is a loopback name (allow with ServerConfig.AllowPrivatePush)")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if rule := blockedRule(ip); rule != "" {
			return refuse(rule)
		}
		return nil
	}
	lookup := g.lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, pushResolveTimeout)
	defer cancel()
	addrs, err := lookup(lctx, host)
	if err != nil {
		return nil // checked again when delivered
	}
	for _, ip := range addrs {
		if rule := blockedRule(ip); rule != "" {
			return refuse(fmt.Sprintf("%s resolves to %s: %s", host, ip, rule))
		}
	}
	return nil
}

// blockedRule names the rule an address breaks, or "" if it may be used.
func blockedRule(ip netip.Addr) string {
	ip = ip.Unmap()
	var what string
	switch {
	case ip.IsLoopback():
		what = "a loopback address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		what = "a link-local address (such as the cloud metadata service)"
	case ip.IsUnspecified():
		what = "an unspecified address"
	case ip.IsPrivate():
		what = "a private address"
	case ip.IsMulticast():
		what = "a multicast address"
	default:
		return ""
	}
	return "it is " + what + " (allow with ServerConfig.AllowPrivatePush)"
}
