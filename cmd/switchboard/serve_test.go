package main

import (
	"io"
	"strings"
	"testing"
)

// TestParseServeRefuses: flags that cannot work are refused with a line
// that names them, before anything starts.
func TestParseServeRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the message
	}{
		{nil, "nothing to serve"},
		{[]string{"-skills", "x", "extra"}, "unexpected arguments"},
		{[]string{"-skills", "x", "-auth-issuer", "https://as.example"}, "need -listen"},
		{[]string{"-skills", "x", "-listen", ":0", "-auth-issuer", "https://as.example"}, "-auth-audience is required"},
		{[]string{"-skills", "x", "-listen", ":0", "-auth-scope", "mcp"}, "-auth-audience is required"},
		{[]string{"-skills", "x", "-listen", ":0", "-auth-audience", "https://gw.example"}, "needs -auth-key or -auth-hs256-secret-env"},
		{[]string{"-skills", "x", "-listen", ":0", "-shutdown-delay", "-1s"}, "-shutdown-delay -1s"},
		{[]string{"-skills", "x", "-no-such-flag"}, "no-such-flag"},
		{[]string{"-skills", "x", "-call-timeout", "0s"}, "-call-timeout 0s"},
		{[]string{"-skills", "x", "-rate", "-1"}, "-rate -1"},
		{[]string{"-skills", "x", "-burst", "-2"}, "-burst -2"},
		{[]string{"-skills", "x", "-prefix", "sometimes"}, "-prefix: prefix \"sometimes\""},
	} {
		var out strings.Builder
		if _, err := parseServe(tc.args, &out); err == nil || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%q: %v, %q; want it refused naming %q", tc.args, err, out.String(), tc.want)
		}
	}
	if _, err := parseServe([]string{"-skills", "x", "-listen", ":0", "-shutdown-delay", "2s"}, io.Discard); err != nil {
		t.Errorf("valid flags refused: %v", err)
	}
}

func TestServeGuardFlags(t *testing.T) {
	o, err := parseServe([]string{"-skills", "x", "-guard-pii", "-guard-injection", "-guard-deny", `rm\s+-rf`}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := o.guards()
	if err != nil || len(rules) != 3 {
		t.Fatalf("rules %+v, %v", rules, err)
	}
	o.guardDeny = list{"("}
	if _, err := o.guards(); err == nil || !strings.Contains(err.Error(), "-guard-deny") {
		t.Errorf("a broken -guard-deny: %v", err)
	}
}
