package redact

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"Authorization: Bearer abcdefghijklmnop":    "Authorization: [REDACTED]",
		"key sk-proj-abcdefghijklmnopqrstuv failed": "key [REDACTED] failed",
		"dial https://user:pass@example.com/x":      "dial https://[REDACTED]@example.com/x",
		"api_key=12345 other=1":                     "api_key=[REDACTED] other=1",
		"password: hunter2":                         "password: [REDACTED]",
		"nothing secret here":                       "nothing secret here",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Redact(strings.Repeat("x", 5000)); len(got) > 2010 {
		t.Errorf("not capped: %d", len(got))
	}
}
