package openai

import (
	"encoding/json"
	"errors"
	"regexp"

	"github.com/switchboard-dev/switchboard/llm"
)

// An answer schema (llm.Request.Output) goes as OpenAI's json_schema
// response format. Strict mode, which constrains decoding to the schema,
// takes only a subset of JSON Schema: the root is an object, every object
// has "additionalProperties": false and lists all its properties in
// "required", and some keywords (allOf, not, if/then/else, oneOf,
// patternProperties, ...) are refused. A schema in that subset (as the
// agent derives from a Go struct) is sent with strict: true; any other is
// sent as it is with strict: false, where the model follows it without
// being held to it. The schema is not rewritten into the subset: making an
// optional property required-but-nullable changes what a valid answer is,
// and the caller validates the answer against its own schema either way.

// defaultOutputName names an answer schema that has no name.
const defaultOutputName = "answer"

var outputName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// nameNot matches the characters a schema name may not have.
var nameNot = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// schemaName returns o's name in the form OpenAI accepts.
func schemaName(o *llm.Output) string {
	n := o.Name
	if outputName.MatchString(n) {
		return n
	}
	n = nameNot.ReplaceAllString(n, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	if n == "" || n == "_" {
		return defaultOutputName
	}
	return n
}

// jsonSchemaFormat is the json_schema object of a response format (chat
// completions: response_format.json_schema; the Responses API: text.format,
// with Type set).
type jsonSchemaFormat struct {
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict"`
}

// schemaFormat checks o's schema and returns its json_schema object.
func schemaFormat(o *llm.Output) (jsonSchemaFormat, error) {
	var root any
	if err := json.Unmarshal(o.Schema, &root); err != nil {
		return jsonSchemaFormat{}, err
	}
	if _, ok := root.(map[string]any); !ok {
		return jsonSchemaFormat{}, errors.New("it is JSON but not an object")
	}
	return jsonSchemaFormat{Name: schemaName(o), Description: o.Description, Schema: o.Schema, Strict: strictSchema(root)}, nil
}

// responseFormat is the chat completions response_format of o.
func responseFormat(o *llm.Output) (json.RawMessage, error) {
	f, err := schemaFormat(o)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Type       string           `json:"type"`
		JSONSchema jsonSchemaFormat `json:"json_schema"`
	}{"json_schema", f})
}

// strictRefused are the keywords strict mode refuses.
var strictRefused = []string{"allOf", "not", "if", "then", "else", "oneOf", "dependentRequired", "dependentSchemas",
	"patternProperties", "unevaluatedProperties", "propertyNames", "minProperties", "maxProperties",
	"unevaluatedItems", "contains", "minContains", "maxContains", "uniqueItems"}

// strictSchema reports whether a decoded schema is in strict mode's
// subset: an object at the root (not a union), and every schema in it
// strict (see strictNode).
func strictSchema(root any) bool {
	m, ok := root.(map[string]any)
	if !ok || !isObjectSchema(m) {
		return false
	}
	if _, union := m["anyOf"]; union {
		return false
	}
	return strictNode(m, 0)
}

// maxSchemaDepth bounds the walk of a schema.
const maxSchemaDepth = 64

// strictNode reports whether a schema and the schemas in it use no refused
// keyword and close every object: additionalProperties false and every
// property required.
func strictNode(m map[string]any, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	for _, k := range strictRefused {
		if _, ok := m[k]; ok {
			return false
		}
	}
	props, _ := m["properties"].(map[string]any)
	if isObjectSchema(m) {
		if ap, ok := m["additionalProperties"].(bool); !ok || ap {
			return false
		}
		req := map[string]bool{}
		list, _ := m["required"].([]any)
		for _, r := range list {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
		for name := range props {
			if !req[name] {
				return false
			}
		}
	}
	sub := func(v any) bool {
		s, ok := v.(map[string]any)
		if !ok {
			_, isBool := v.(bool)
			return isBool || v == nil
		}
		return strictNode(s, depth+1)
	}
	for _, p := range props {
		if !sub(p) {
			return false
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := m[k].(map[string]any)
		for _, d := range defs {
			if !sub(d) {
				return false
			}
		}
	}
	for _, k := range []string{"anyOf", "prefixItems"} {
		list, _ := m[k].([]any)
		for _, s := range list {
			if !sub(s) {
				return false
			}
		}
	}
	switch items := m["items"].(type) {
	case map[string]any:
		if !strictNode(items, depth+1) {
			return false
		}
	case []any:
		for _, s := range items {
			if !sub(s) {
				return false
			}
		}
	}
	return true
}

// isObjectSchema reports whether a schema describes an object: its type is
// "object" (or includes it), or it has properties.
func isObjectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, x := range t {
			if x == "object" {
				return true
			}
		}
	}
	_, ok := m["properties"]
	return ok
}
