package toolsearch

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Action classes: what a tool does to its object, told by the verbs of its
// name and of a query (the CRUD verbs, their HTTP names and common
// English synonyms).
const (
	actCreate uint8 = 1 << iota
	actRead
	actList
	actUpdate
	actDelete
	actSearch
)

var actionWords = map[uint8][]string{
	actCreate: {"create", "add", "new", "make", "insert", "post", "write", "save", "generate"},
	actRead:   {"get", "read", "show", "view", "fetch", "retrieve", "display", "describe"},
	actList:   {"list", "all", "every", "enumerate"},
	actUpdate: {"update", "edit", "change", "modify", "set", "patch", "put", "rename", "replace"},
	actDelete: {"delete", "remove", "drop", "erase", "destroy", "clear", "purge"},
	actSearch: {"search", "find", "look", "lookup", "query", "locate"},
}

// actionOf maps a stemmed term to its action classes.
var actionOf = func() map[string]uint8 {
	m := map[string]uint8{}
	for a, ws := range actionWords {
		for _, w := range ws {
			m[english.Stem(w, true)] |= a
		}
	}
	return m
}()

// actionOfWord maps an inflected form of an action word (create, creates,
// created, creating) to its action classes: a query's actions are read
// from its words as written, so a noun the stemmer merges with a verb
// ("edition" and "edit") is no action.
var actionOfWord = func() map[string]uint8 {
	m := map[string]uint8{}
	for a, ws := range actionWords {
		for _, w := range ws {
			forms := []string{w, w + "s", w + "es", w + "ed", w + "d", w + "ing"}
			if strings.HasSuffix(w, "e") {
				forms = append(forms, w[:len(w)-1]+"ing")
			}
			if n := len(w); n >= 3 && !strings.ContainsRune("aeiouwy", rune(w[n-1])) && strings.ContainsRune("aeiou", rune(w[n-2])) && !strings.ContainsRune("aeiou", rune(w[n-3])) {
				forms = append(forms, w+w[n-1:]+"ed", w+w[n-1:]+"ing")
			}
			for _, f := range forms {
				m[f] |= a
			}
		}
	}
	return m
}()

// queryActions are the action classes of the words of query.
func queryActions(query string) uint8 {
	var a uint8
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) }) {
		a |= actionOfWord[w]
	}
	return a
}

// actionsOf is the union of the action classes of terms.
func actionsOf(terms []string) uint8 {
	var a uint8
	for _, t := range terms {
		a |= actionOf[t]
	}
	return a
}

// acronyms are the initials of each pair of adjacent terms starting with
// letters: "pull", "request" gives "pr".
func acronyms(terms []string) []string {
	var out []string
	for j := 1; j < len(terms); j++ {
		a, _ := utf8.DecodeRuneInString(terms[j-1])
		b, _ := utf8.DecodeRuneInString(terms[j])
		if unicode.IsLetter(a) && unicode.IsLetter(b) && terms[j-1] != terms[j] {
			out = append(out, string([]rune{a, b}))
		}
	}
	return out
}

var (
	urlPattern   = regexp.MustCompile(`(?i)(\bhttps?://|\bwww\.|\b[a-z0-9-]+\.(com|org|net|io|dev|app|ai)\b)`)
	emailPattern = regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b`)
	filePattern  = regexp.MustCompile(`(?i)\b[\w-]+\.(txt|md|json|ya?ml|toml|csv|tsv|pdf|png|jpe?g|gif|svg|html?|xml|log|ini|conf)\b`)
)

// entities are the kinds of things query writes out: "url" for a web
// address, "email" for an email address, "file" for a file name.
func entities(query string) []string {
	if !strings.ContainsAny(query, ".@") {
		return nil
	}
	var out []string
	emails := emailPattern.FindAllStringIndex(query, -1)
	if len(emails) > 0 {
		out = append(out, "email")
	}
	// A URL pattern inside an email address is the address's domain.
	rest := emailPattern.ReplaceAllString(query, " ")
	if urlPattern.MatchString(rest) {
		out = append(out, "url")
	}
	if filePattern.MatchString(rest) {
		out = append(out, "file")
	}
	return out
}
