package wire

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
