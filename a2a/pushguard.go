package a2a

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
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
	if ip, ok := hostAddr(host); ok {
		if rule := blockedRule(ip); rule != "" {
			if ip.String() != host {
				rule = fmt.Sprintf("%s is the address %s: %s", host, ip, rule)
			}
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

// hostAddr is the address a URL's host (lower case, without a trailing
// dot) names when it is an address literal in any spelling a resolver
// accepts: IPv6 (with a zone, IPv4-mapped, IPv4-compatible), dotted-quad
// IPv4, and the inet_aton forms that getaddrinfo, curl and browsers read
// as IPv4 (127.1, 2130706433, 0x7f000001, 0177.0.0.1).
func hostAddr(host string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	return legacyIPv4(host)
}

// legacyIPv4 parses inet_aton's IPv4 forms: one to four parts separated by
// dots, each decimal, octal (a leading 0) or hexadecimal (0x), the last
// part filling the remaining bytes.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0" // "0x" alone is 0, as inet_aton reads it
			}
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		last := i == len(parts)-1
		limit := uint64(255)
		if last {
			limit = 1<<(8*(4-i)) - 1
		}
		if n > limit {
			return netip.Addr{}, false
		}
		if last {
			v = v<<(8*(4-i)) | n
		} else {
			v = v<<8 | n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// blockedRule names the rule an address breaks, or "" if it may be used.
func blockedRule(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		// IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
		// addresses carry an IPv4 address in their last four bytes.
		b := ip.As16()
		if prefix := b[:12]; [12]byte(prefix) == [12]byte{} && (b[12] != 0 || b[13] != 0) ||
			[12]byte(prefix) == [12]byte{0, 0x64, 0xff, 0x9b} {
			if rule := blockedRule(netip.AddrFrom4([4]byte(b[12:]))); rule != "" {
				return rule
			}
		}
	}
	var what string
	switch {
	case ip.IsLoopback():
		what = "a loopback address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		what = "a link-local address (such as the cloud metadata service)"
	case ip.IsUnspecified(), ip.Is4() && ip.As4()[0] == 0: // 0.0.0.0/8 reaches this host on Linux
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
