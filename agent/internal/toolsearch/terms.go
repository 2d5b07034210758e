package toolsearch

import (
	"encoding/json"
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
	var out []string
	var word []rune
	emit := func(w string) {
		w = strings.ToLower(w)
		if w == "" || stopWord(w) {
			return
		}
		out = append(out, english.Stem(w, true))
	}
	flush := func() {
		if len(word) == 0 {
			return
		}
		parts, start := 0, 0
		for i := 1; i < len(word); i++ {
			if unicode.IsUpper(word[i]) && (unicode.IsLower(word[i-1]) || (i+1 < len(word) && unicode.IsLower(word[i+1]) && unicode.IsUpper(word[i-1]))) {
				emit(string(word[start:i]))
				start, parts = i, parts+1
			}
		}
		emit(string(word[start:]))
		if parts > 0 {
			emit(string(word))
		}
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
	return out
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
			for k, pv := range x {
				switch k {
				case "properties", "patternProperties", "$defs", "definitions":
					if m, ok := pv.(map[string]any); ok {
						for name, sub := range m {
							b.WriteString(name)
							b.WriteByte(' ')
							walk(sub, depth+1)
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
