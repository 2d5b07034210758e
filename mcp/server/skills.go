package server

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/mcp/internal/skillwire"
	"github.com/switchboard-dev/switchboard/skills"
)

// maxSkillResource bounds the bytes of one skill file served as a resource:
// a larger file's read is refused (the skills toolset's file tool pages it).
const maxSkillResource = 1 << 20

// offerSkills serves the skills as the MCP skills extension
// (io.modelcontextprotocol/skills) specifies: each skill's SKILL.md as the
// resource skill://<skill>/SKILL.md and its bundled files beside it, read
// through the skills toolset (confined to the skill's folder, as its read
// tool is), with the extension's skills/list and skills/get methods. Each
// skill is also a prompt (its instructions), for hosts that do not
// implement the extension. A skill whose body fails to load is left out
// and logged.
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
		s.mcp.AddResource(&gomcp.Resource{URI: skillURI(name, skillMD), Name: path.Base(skillPath(name)),
			Description: sk.Description, MIMEType: "text/markdown"}, s.skillFile(name, mainFile(sk)))
		for _, f := range act.Files {
			uri := skillURI(name, f.Path)
			s.mcp.AddResource(&gomcp.Resource{URI: uri, Name: name + "/" + f.Path, Size: f.Size, MIMEType: mimeOf(f.Path)},
				s.skillFile(name, f.Path))
		}
	}
	// Errors only when the name is a standard method's, which these are not.
	_ = gomcp.AddReceivingCustomMethod(s.mcp, skillwire.MethodList, s.listSkills)
	_ = gomcp.AddReceivingCustomMethod(s.mcp, skillwire.MethodGet, s.getSkill)
}

// declareSkills declares the skills extension (and the resources
// capability it requires) in the server's capabilities, keeping go-sdk's
// default logging capability when none were given.
func declareSkills(opts *gomcp.ServerOptions) {
	ownCapabilities(opts).AddExtension(skillwire.Extension, nil)
	opts.HasResources = true
}

// skillFile reads one bundled file of a skill, whole: the skills toolset
// reads at most its Config.MaxReadBytes at a time, so the file is read in
// pages. A file larger than maxSkillResource is refused with an error
// naming its size and the bound, never cut short silently.
func (s *Server) skillFile(skill, rel string) gomcp.ResourceHandler {
	return func(ctx context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
		data, err := s.readSkillFile(ctx, skill, rel, req.Params.URI)
		if err != nil {
			return nil, err
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

// readSkillFile reads one file of a skill whole, in pages of the skills
// toolset's Config.MaxReadBytes, refusing one larger than
// maxSkillResource with an error naming its size and the bound.
func (s *Server) readSkillFile(ctx context.Context, skill, rel, uri string) ([]byte, error) {
	var data []byte
	for {
		page, size, err := s.cfg.Skills.ReadFile(ctx, skill, rel, int64(len(data)))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, gomcp.ResourceNotFoundError(uri)
		}
		if size > maxSkillResource {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("%s is %d bytes, more than the %d bytes (1 MiB) one resource read returns; "+
					"read it in pages with the tool %s", uri, size, maxSkillResource, skills.ToolReadFile),
				Data: json.RawMessage(fmt.Sprintf(`{"uri":%q,"size":%d,"limit":%d}`, uri, size, maxSkillResource))}
		}
		data = append(data, page...)
		if len(page) == 0 || int64(len(data)) >= size {
			return data, nil
		}
	}
}

// skillMD is the name of a skill's main file in its URI, whatever the
// case of the file in the folder.
const skillMD = "SKILL.md"

// skillPath is a skill's path in the skill:// namespace: its name, with a
// Claude Code plugin's skill "plugin:name" at "plugin/name" (the final
// segment is the skill's own name, as the extension requires).
func skillPath(skill string) string { return strings.ReplaceAll(skill, ":", "/") }

func skillURI(skill, rel string) string {
	host, rest, _ := strings.Cut(skillPath(skill), "/")
	p := "/" + rel
	if rest != "" {
		p = "/" + rest + p
	}
	return (&url.URL{Scheme: "skill", Host: url.PathEscape(host), Path: p}).String()
}

// mainFile is the file name of a skill's SKILL.md in its folder.
func mainFile(sk *skills.Skill) string {
	if b := path.Base(filepath.ToSlash(sk.File)); strings.EqualFold(b, skillMD) {
		return b
	}
	return skillMD
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
