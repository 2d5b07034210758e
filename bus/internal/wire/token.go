package wire

import (
	"encoding/base64"
	"strings"
)

// maxToken bounds a subject token's length.
const maxToken = 128

// Token makes s usable as one subject token: characters other than ASCII
// letters, digits, '-' and '_' become '_', an empty string becomes "_", and
// it is cut at 128 bytes. A token that is already clean is returned without
// allocating.
func Token(s string) string {
	if s == "" {
		return "_"
	}
	clean := len(s) <= maxToken
	if clean {
		for i := 0; i < len(s); i++ {
			if !tokenByte(s[i]) {
				clean = false
				break
			}
		}
	}
	if clean {
		return s
	}
	if len(s) > maxToken {
		s = s[:maxToken]
	}
	b := []byte(s)
	for i, c := range b {
		if !tokenByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func tokenByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
}

// QueueGroup is the queue group responders and workers join by default.
const QueueGroup = "switchboard"

// Key makes a KV key or subject token of an id given from outside: ids made of
// letters, digits, '-' and '_' are kept (readable keys); any other id is
// base64url-encoded behind '='.
func Key(id string) string {
	if id != "" && len(id) <= 200 && strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0 {
		return id
	}
	return "=" + base64.RawURLEncoding.EncodeToString([]byte(id))
}
