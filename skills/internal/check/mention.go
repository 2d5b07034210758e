package check

import (
	"path"
	"strings"
)

// mentioned reports whether a bundled file p (a slash path relative to the
// skill folder) is mentioned: linked (or a folder holding it is; a link
// differing only in case counts, as it is reported as link-case), or
// written in text as its path or as one of its folders with a trailing
// slash ("references/"), standing alone rather than inside a longer path
// or word.
func mentioned(text string, links []string, p string) bool {
	for _, l := range links {
		if strings.EqualFold(l, p) || len(p) > len(l) && p[len(l)] == '/' && strings.EqualFold(p[:len(l)], l) {
			return true
		}
	}
	if containsPath(text, p) {
		return true
	}
	for d := path.Dir(p); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if containsPath(text, d+"/") {
			return true
		}
	}
	return false
}

// containsPath reports whether tok occurs in text with a boundary on each
// side: before it the start of the text, a slash ("./x", "{baseDir}/x") or
// a character that cannot be part of a path; after it the end of the
// text, or a character that cannot be part of a path (a period counts as
// punctuation when no path character follows it).
func containsPath(text, tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], tok)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(tok)
		if (start == 0 || text[start-1] == '/' || !pathByte(text[start-1])) && boundaryAfter(text, end) {
			return true
		}
		i = start + 1
	}
	return false
}

func boundaryAfter(text string, end int) bool {
	if end == len(text) {
		return true
	}
	c := text[end]
	if c == '.' {
		return end+1 == len(text) || !pathByte(text[end+1]) && text[end+1] != '/'
	}
	return !pathByte(c) && c != '/'
}

// pathByte reports bytes that continue a path or a word: letters, digits,
// "_", "-", "." and any byte of a multi-byte character.
func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c >= 0x80
}
