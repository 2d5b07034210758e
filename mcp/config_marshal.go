package mcp

import (
	"encoding/json"
	"strconv"
	"time"
)

// MarshalJSON writes d the way UnmarshalJSON reads it: a whole number of
// milliseconds as a number (what other MCP hosts read), anything finer as
// a Go duration string, so a marshalled config parses back to the same
// value.
func (d duration) MarshalJSON() ([]byte, error) {
	v := time.Duration(d)
	if v%time.Millisecond == 0 {
		return strconv.AppendInt(nil, int64(v/time.Millisecond), 10), nil
	}
	return json.Marshal(v.String())
}

// MarshalJSON writes the server's entry of an mcpServers object, with its
// timeouts in milliseconds (or duration strings), so that ParseConfig reads
// back the same values; encoding/json's default would write nanoseconds.
func (sc ServerConfig) MarshalJSON() ([]byte, error) {
	type plain ServerConfig
	return json.Marshal(struct {
		plain
		Timeout        duration `json:"timeout,omitempty"`
		StartupTimeout duration `json:"startupTimeout,omitempty"`
		IdleTimeout    duration `json:"idleTimeout,omitempty"`
	}{plain(sc), duration(sc.Timeout), duration(sc.StartupTimeout), duration(sc.IdleTimeout)})
}

// MarshalJSON writes the "oauth" settings with LoginTimeout in
// milliseconds (or a duration string), as UnmarshalJSON reads it.
func (a Auth) MarshalJSON() ([]byte, error) {
	type plain Auth
	return json.Marshal(struct {
		plain
		LoginTimeout duration `json:"loginTimeout,omitempty"`
	}{plain(a), duration(a.LoginTimeout)})
}
