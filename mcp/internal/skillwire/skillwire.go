// Package skillwire holds the wire types of the MCP skills extension
// (io.modelcontextprotocol/skills, SEP-2640): the skills/list and
// skills/get methods and the Skill entry they return, shared by the
// client (package mcp) and the server (package mcp/server).
package skillwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the extension's identifier in the capabilities.
const Extension = "io.modelcontextprotocol/skills"

// The extension's methods.
const (
	MethodList = "skills/list"
	MethodGet  = "skills/get"
)

// The per-skill limits every conforming host accepts: resources per skill
// (SKILL.md included) and the sum of their sizes.
const (
	MaxResources  = 512
	MaxTotalBytes = 16 << 20
)

// Resource is one file of a skill with the digest ("sha256:<hex>") and
// size of its raw bytes.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Resources is a skill's complete file manifest, or Dynamic when the
// server cannot publish stable digests (the JSON string "dynamic").
type Resources struct {
	Dynamic bool
	Files   []Resource
}

// MarshalJSON writes "dynamic" or the array of files.
func (r Resources) MarshalJSON() ([]byte, error) {
	if r.Dynamic {
		return []byte(`"dynamic"`), nil
	}
	if r.Files == nil {
		return []byte(`[]`), nil
	}
	return json.Marshal(r.Files)
}

// UnmarshalJSON reads "dynamic" or an array of files; anything else
// (absent included) is an invalid entry, which hosts must not load.
func (r *Resources) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte(`"dynamic"`)) {
		*r = Resources{Dynamic: true}
		return nil
	}
	if len(data) == 0 || data[0] != '[' {
		return errors.New(`resources must be an array of files or the string "dynamic"`)
	}
	var files []Resource
	if err := json.Unmarshal(data, &files); err != nil {
		return fmt.Errorf("resources: %w", err)
	}
	*r = Resources{Files: files}
	return nil
}

// Skill is the entry of one skill: the URI of its SKILL.md, its
// frontmatter verbatim as a JSON object, and its files.
type Skill struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   *Resources     `json:"resources"`
}

// ListParams are skills/list's parameters.
type ListParams struct {
	gomcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is skills/list's result.
type ListResult struct {
	gomcp.ResultBase
	ResultType string  `json:"resultType"`
	Skills     []Skill `json:"skills"`
	NextCursor string  `json:"nextCursor,omitempty"`
	TTLMs      int64   `json:"ttlMs"`
	CacheScope string  `json:"cacheScope"`
}

// GetParams are skills/get's parameters.
type GetParams struct {
	gomcp.ParamsBase
	URI string `json:"uri"`
}

// GetResult is skills/get's result.
type GetResult struct {
	gomcp.ResultBase
	ResultType string `json:"resultType"`
	Skill      Skill  `json:"skill"`
	TTLMs      int64  `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}
