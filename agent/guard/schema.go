package guard

import (
	"context"
	"encoding/json"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/schema"
)

// SchemaConfig configures a JSON Schema check.
type SchemaConfig struct {
	// Name is the guard's name (default "json-schema").
	Name string
	// Schema is the JSON Schema (draft-04 to 2020-12; external references
	// are not loaded) the text must be a valid instance of.
	Schema json.RawMessage
}

// Schema trips on text that is not a JSON value valid against a schema:
// a tool's arguments (agent.GuardToolCall), a structured result, a typed
// answer.
type Schema struct {
	name   string
	schema []byte
	cache  *schema.Cache
}

// NewSchema returns the check; a schema that does not compile is an error.
func NewSchema(cfg SchemaConfig) (*Schema, error) {
	s := &Schema{name: cfg.Name, schema: cfg.Schema, cache: schema.NewCache()}
	if s.name == "" {
		s.name = "json-schema"
	}
	if _, err := s.cache.Compile(cfg.Schema); err != nil {
		return nil, configErr("guard.SchemaConfig.Schema: %v", err)
	}
	return s, nil
}

// Local marks the guard as an agent.LocalGuard: it only computes.
func (*Schema) Local() {}

// Name is the guard's name.
func (s *Schema) Name() string { return s.name }

// Check validates the text.
func (s *Schema) Check(_ context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	if err := s.cache.Validate(s.schema, []byte(c.Text)); err != nil {
		return agent.Trip("not valid against the schema: " + err.Error()), nil
	}
	return agent.Pass(), nil
}
