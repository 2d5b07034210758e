package console

import (
	"encoding/json"

	"github.com/switchboard-dev/switchboard/internal/redact"
)

// redactJSON removes what looks like a secret from an encoded value, with
// the redaction the logs and failures use (internal/redact): on the
// encoded text when the result is still valid JSON (so "token":"…" pairs
// are caught), else string by string.
func redactJSON(data []byte) []byte {
	s := string(data)
	r := redact.Secrets(s)
	if r == s {
		return data
	}
	if json.Valid([]byte(r)) {
		return []byte(r)
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return []byte(`{"redacted":true}`)
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return []byte(`{"redacted":true}`)
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return redact.Secrets(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i])
		}
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				if r := redact.Secrets(k + "=" + s); r != k+"="+s {
					x[k] = "[REDACTED]"
					continue
				}
			}
			x[k] = redactValue(e)
		}
	}
	return v
}

// redactText is redact.Secrets, for the text of a run's input.
func redactText(s string) string { return redact.Secrets(s) }

// clip cuts s to n bytes (on a rune boundary) with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && (s[i]&0xC0) == 0x80 {
		i--
	}
	return s[:i] + "…"
}
