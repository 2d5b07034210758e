// Package schema validates JSON values against JSON Schemas (draft-07,
// 2019-09 and 2020-12; 2020-12 when a schema names none) with
// github.com/santhosh-tekuri/jsonschema/v6, caching compiled schemas.
//
// Remote and file references are never loaded: a schema that needs them
// fails to compile, and the caller treats the tool as unvalidated.
//
// The library decodes every instance into Go values and walks them; for
// a schema made of the common keywords, a valid instance is confirmed in
// one pass over its bytes instead (fast.go), and every other instance
// goes to the library, whose verdict and message stand.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxCached and maxCachedBytes bound the cache (schemas, and the bytes of
// their text); past either the cache is cleared (schemas are few and
// compiled again on their next use).
const (
	maxCached      = 4096
	maxCachedBytes = 16 << 20
)

// Cache compiles and caches schemas by their text. It is safe for
// concurrent use.
type Cache struct {
	mu    sync.Mutex
	m     map[string]entry
	bytes int // the text of the cached schemas
}

type entry struct {
	s    *jsonschema.Schema
	fast *fastSchema // nil: no fast path (or the schema true, which needs none)
	// hasFast says fast is the schema's fast form.
	hasFast bool
	err     error
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{m: map[string]entry{}} }

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %q: external references are not loaded", url)
}

// Compile returns the compiled form of schema text.
func (c *Cache) Compile(text []byte) (*jsonschema.Schema, error) {
	e := c.entry(text)
	return e.s, e.err
}

// entry returns the cached compilation of schema text, compiling it on
// the first use.
func (c *Cache) entry(text []byte) entry {
	c.mu.Lock()
	e, ok := c.m[string(text)] // no copy of the text for a lookup
	c.mu.Unlock()
	if ok {
		return e
	}
	var doc any
	doc, e.s, e.err = compile(text)
	if e.err == nil {
		e.fast, e.hasFast = compileFast(doc)
	}
	c.mu.Lock()
	if len(c.m) >= maxCached || c.bytes+len(text) > maxCachedBytes {
		clear(c.m)
		c.bytes = 0
	}
	if _, ok := c.m[string(text)]; !ok {
		c.bytes += len(text)
	}
	c.m[string(text)] = e
	c.mu.Unlock()
	return e
}

// compile compiles schema text; doc is its decoded document.
func compile(text []byte) (doc any, s *jsonschema.Schema, err error) {
	doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, nil, fmt.Errorf("schema: %w", err)
	}
	s, err = c.Compile(loc)
	if err != nil {
		return nil, nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return doc, s, nil
}

// Validate checks the JSON value instance against schema text. It returns
// an error describing every violation, worded for a model to fix its
// arguments, or an error saying the schema itself is unusable
// (errors.Is(err, ErrBadSchema)).
//
// A schema made only of the common keywords (type, properties, required,
// additionalProperties, items, annotations) confirms a valid instance in
// one pass over its bytes; any other instance, and every instance of
// another schema, is decoded and checked by the full validator, which
// gives every verdict of invalid and its message.
func (c *Cache) Validate(schemaText, instance []byte) error {
	e := c.entry(schemaText)
	if e.err != nil {
		return fmt.Errorf("%w: %v", ErrBadSchema, e.err)
	}
	if e.hasFast && e.fast.valid(instance) {
		return nil
	}
	return validateFull(e.s, instance)
}

// validateFull decodes instance and validates it against s with the full
// validator.
func validateFull(s *jsonschema.Schema, instance []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(describe(ve))
		}
		return err
	}
	return nil
}

// ErrBadSchema marks a schema that cannot be compiled.
var ErrBadSchema = errors.New("unusable JSON schema")

// describe flattens a validation error tree into one line per leaf.
func describe(ve *jsonschema.ValidationError) string {
	p := message.NewPrinter(language.English)
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(p)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("(and %d more)", len(lines)-20))
	}
	return strings.Join(lines, "; ")
}
