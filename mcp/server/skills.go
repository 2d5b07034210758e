package server

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/skills"
)

// maxSkillResource bounds the bytes of one skill file served as a resource:
// a larger file's read is refused (the skills toolset's file tool pages it).
const maxSkillResource = 1 << 20

// offerSkills offers every skill as a prompt (its instructions) and its
// bundled files as resources skill://<skill>/<path>, read through the
// skills toolset (confined to the skill's folder, as its read tool is).
// A skill whose body fails to load is left out and logged.
func (s *Server) offerSkills(ctx context.Context) {
	ts := s.cfg.Skills
	for _, sk := range ts.Skills() {
		name := sk.Name
		s.mcp.AddPrompt(&gomcp.Prompt{Name: name, Description: sk.Description},
			func(ctx context.Context, _ *gomcp.GetPromptRequest) (*gomcp.GetPromptResult, error) {
				_, body, err := ts.Body(ctx, name)
				if err != nil {
					return nil, fmt.Errorf("skill %s: %w", name, err)
				}
				return &gomcp.GetPromptResult{Description: sk.Description, Messages: []*gomcp.PromptMessage{{
					Role: "user", Content: &gomcp.TextContent{Text: body.Markdown}}}}, nil
			})
		act, err := ts.Activate(ctx, name)
		if err != nil {
			s.log.Warn().Err(err).Str("skill", name).Msg("skill not offered as resources")
			continue
		}
		for _, f := range act.Files {
			uri := skillURI(name, f.Path)
			s.mcp.AddResource(&gomcp.Resource{URI: uri, Name: name + "/" + f.Path, Size: f.Size, MIMEType: mimeOf(f.Path)},
				s.skillFile(name, f.Path))
		}
	}
}

// skillFile reads one bundled file of a skill, whole: the skills toolset
// reads at most its Config.MaxReadBytes at a time, so the file is read in
// pages. A file larger than maxSkillResource is refused with an error
// naming its size and the bound, never cut short silently.
func (s *Server) skillFile(skill, rel string) gomcp.ResourceHandler {
	return func(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
		var data []byte
		for {
			page, size, err := s.cfg.Skills.ReadFile(ctx, skill, rel, int64(len(data)))
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, gomcp.ResourceNotFoundError(req.Params.URI)
			}
			if size > maxSkillResource {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("%s is %d bytes, more than the %d bytes (1 MiB) one resource read returns; "+
						"read it in pages with the tool %s", req.Params.URI, size, maxSkillResource, skills.ToolReadFile),
					Data: json.RawMessage(fmt.Sprintf(`{"uri":%q,"size":%d,"limit":%d}`, req.Params.URI, size, maxSkillResource))}
			}
			data = append(data, page...)
			if len(page) == 0 || int64(len(data)) >= size {
				break
			}
		}
		rc := &gomcp.ResourceContents{URI: req.Params.URI, MIMEType: mimeOf(rel)}
		if isText(rc.MIMEType) {
			rc.Text = string(data)
		} else {
			rc.Blob = data
		}
		return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{rc}}, nil
	}
}

func skillURI(skill, rel string) string {
	return (&url.URL{Scheme: "skill", Host: url.PathEscape(skill), Path: "/" + rel}).String()
}

func mimeOf(rel string) string {
	switch path.Ext(rel) {
	case ".md":
		return "text/markdown"
	case ".py", ".sh", ".txt", ".js", ".ts", ".go", ".yaml", ".yml", ".toml", "":
		return "text/plain"
	}
	if t := mime.TypeByExtension(path.Ext(rel)); t != "" {
		return t
	}
	return "application/octet-stream"
}

func isText(mt string) bool {
	return strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json") || strings.Contains(mt, "xml")
}
