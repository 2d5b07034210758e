package toolsearch

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Terms splits text into search terms: runs of letters and digits,
// lower-cased and stemmed (Snowball English), English stop words left out.
// A word with inner capitals is split at them and also kept whole, so
// "GitHub" is "github", "git" and "hub", and "HubSpot" matches "hubspot".
func Terms(text string) []string {
	t, _, _, _ := splitTerms(text)
	return t
}

// splitTerms is Terms, and for each term whether it is a part of a word
// split at inner capitals (git and hub of GitHub), its position (the
// number of words before it, stop words counted; the parts and the whole
// of a word share one) and whether its word is plural (isPlural; an
// acronym's plural, URLs, is too).
func splitTerms(text string) (out []string, part []bool, pos []int, plural []bool) {
	var word []rune
	isPart, acronyms := false, false
	n := 0
	emit := func(w string) {
		w = strings.ToLower(w)
		if w == "" || stopWord(w) {
			return
		}
		st := english.Stem(w, true)
		if extraStop[st] {
			return
		}
		out = append(out, st)
		part = append(part, isPart)
		pos = append(pos, n)
		plural = append(plural, acronyms || isPlural(w))
	}
	flush := func() {
		if len(word) == 0 {
			return
		}
		// An acronym's plural (URLs, PRs) is the acronym.
		acronyms = false
		if n := len(word); n > 2 && word[n-1] == 's' && allUpper(word[:n-1]) {
			word = word[:n-1]
			acronyms = true
		}
		var cuts []int
		for i := 1; i < len(word); i++ {
			if unicode.IsUpper(word[i]) && (unicode.IsLower(word[i-1]) || (i+1 < len(word) && unicode.IsLower(word[i+1]) && unicode.IsUpper(word[i-1]))) {
				cuts = append(cuts, i)
			}
		}
		isPart = len(cuts) > 0
		start := 0
		for _, c := range cuts {
			emit(string(word[start:c]))
			start = c
		}
		emit(string(word[start:]))
		isPart = false
		if len(cuts) > 0 {
			emit(string(word))
		}
		n++
		word = word[:0]
	}
	for len(text) > 0 {
		r, size := utf8.DecodeRuneInString(text)
		text = text[size:]
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			word = append(word, r)
		} else {
			flush()
		}
	}
	flush()
	return out, part, pos, plural
}

// isPlural reports whether a lower-case word reads as a plural: it ends
// in s, not in ss, us or is, and is longer than three letters.
func isPlural(w string) bool {
	n := len(w)
	return n > 3 && w[n-1] == 's' && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is")
}

func allUpper(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

func stopWord(w string) bool {
	return english.IsStopWord(w) || extraStop[w]
}

// extraStop are words every tool listing uses that tell tools apart no
// better than stop words.
var extraStop = map[string]bool{"mcp": true, "tool": true, "api": true, "can": true, "use": true, "e": true, "g": true}

// schemaText is the text of a JSON Schema's properties at any depth: their
// names, descriptions, titles and enum values.
func schemaText(schema json.RawMessage) string {
	if len(schema) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 32 || b.Len() > maxSchemaText {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			// In key order, so a schema clipped at maxSchemaText is
			// always clipped at the same place.
			for _, k := range slices.Sorted(maps.Keys(x)) {
				pv := x[k]
				switch k {
				case "properties", "patternProperties", "$defs", "definitions":
					if m, ok := pv.(map[string]any); ok {
						for _, name := range slices.Sorted(maps.Keys(m)) {
							b.WriteString(name)
							b.WriteByte(' ')
							walk(m[name], depth+1)
						}
					}
				case "description", "title":
					if s, ok := pv.(string); ok {
						b.WriteString(s)
						b.WriteByte(' ')
					}
				case "enum":
					if a, ok := pv.([]any); ok {
						for _, e := range a {
							if s, ok := e.(string); ok {
								b.WriteString(s)
								b.WriteByte(' ')
							}
						}
					}
				default:
					walk(pv, depth+1)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(v, 0)
	return b.String()
}
