package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/switchboard-dev/switchboard/mcp/internal/skillwire"
	"github.com/switchboard-dev/switchboard/skills"
)

// skillsPage is how many skill entries one skills/list page holds: each
// entry's digests are computed from the files when it is listed, so a
// page bounds the reading one request costs.
const skillsPage = 20

// skillsTTL is the freshness hint of a listing or entry, in milliseconds.
const skillsTTL = 60_000

// listSkills answers skills/list: a page of entries, each a complete
// manifest of the skill's files with their digests.
func (s *Server) listSkills(ctx context.Context, _ *gomcp.ServerSession, p *skillwire.ListParams) (*skillwire.ListResult, error) {
	all := s.cfg.Skills.Skills()
	start := 0
	if p != nil && p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("skills/list: cursor %q is not one this server gave", p.Cursor)}
		}
		start = n
	}
	res := &skillwire.ListResult{ResultType: "complete", Skills: []skillwire.Skill{}, TTLMs: skillsTTL, CacheScope: "private"}
	end := min(start+skillsPage, len(all))
	for _, sk := range all[start:end] {
		e, err := s.skillEntry(ctx, sk)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.log.Warn().Err(err).Str("skill", sk.Name).Msg("skill left out of skills/list")
			continue
		}
		res.Skills = append(res.Skills, *e)
	}
	if end < len(all) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}

// getSkill answers skills/get for the skill whose SKILL.md has the URI
// given; an unknown URI is invalid params, as the extension requires.
func (s *Server) getSkill(ctx context.Context, _ *gomcp.ServerSession, p *skillwire.GetParams) (*skillwire.GetResult, error) {
	if p == nil || p.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/get: params.uri is required: the URI of a skill's SKILL.md"}
	}
	for _, sk := range s.cfg.Skills.Skills() {
		if skillURI(sk.Name, skillMD) != p.URI {
			continue
		}
		e, err := s.skillEntry(ctx, sk)
		if err != nil {
			return nil, err
		}
		return &skillwire.GetResult{ResultType: "complete", Skill: *e, TTLMs: skillsTTL, CacheScope: "private"}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("skills/get: %s is not the SKILL.md of a skill this server serves", p.URI)}
}

// skillEntry builds a skill's entry: its frontmatter verbatim and every
// file with its SHA-256 digest. A skill whose files were not all listed
// (more than the toolset's MaxListedFiles) is "dynamic": its manifest
// could not be complete.
func (s *Server) skillEntry(ctx context.Context, sk *skills.Skill) (*skillwire.Skill, error) {
	ts := s.cfg.Skills
	act, err := ts.Activate(ctx, sk.Name)
	if err != nil {
		return nil, err
	}
	main, err := s.readSkillFile(ctx, sk.Name, mainFile(sk), skillURI(sk.Name, skillMD))
	if err != nil {
		return nil, err
	}
	e := &skillwire.Skill{URI: skillURI(sk.Name, skillMD), Frontmatter: frontmatterOf(main, sk), Resources: &skillwire.Resources{}}
	if act.More {
		e.Resources.Dynamic = true
		return e, nil
	}
	sum := sha256.Sum256(main)
	e.Resources.Files = append(e.Resources.Files, skillwire.Resource{URI: e.URI, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(main))})
	for _, f := range act.Files {
		d, n, err := s.digestSkillFile(ctx, sk.Name, f.Path)
		if err != nil {
			return nil, err
		}
		e.Resources.Files = append(e.Resources.Files, skillwire.Resource{URI: skillURI(sk.Name, f.Path), Digest: d, Size: n})
	}
	return e, nil
}

// digestSkillFile hashes a file of a skill page by page, without holding
// it whole.
func (s *Server) digestSkillFile(ctx context.Context, skill, rel string) (string, int64, error) {
	h := sha256.New()
	var n int64
	for {
		page, size, err := s.cfg.Skills.ReadFile(ctx, skill, rel, n)
		if err != nil {
			return "", 0, err
		}
		h.Write(page)
		n += int64(len(page))
		if len(page) == 0 || n >= size {
			return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
		}
	}
}

// frontmatterOf is a SKILL.md's YAML frontmatter as a JSON object, every
// field as the author wrote it. Frontmatter that strict YAML cannot read
// (the skills loader is lenient) is rendered from the fields the loader
// read. name and description are always present.
func frontmatterOf(data []byte, sk *skills.Skill) map[string]any {
	fm := map[string]any{}
	if block, ok := frontmatterBlock(data); ok {
		if err := yaml.Unmarshal(block, &fm); err != nil {
			fm = map[string]any{}
		}
	}
	if len(fm) == 0 {
		for k, v := range sk.Extra {
			fm[k] = v
		}
		if sk.License != "" {
			fm["license"] = sk.License
		}
		if sk.Compatibility != "" {
			fm["compatibility"] = sk.Compatibility
		}
		if len(sk.Metadata) > 0 {
			fm["metadata"] = sk.Metadata
		}
		if len(sk.AllowedTools) > 0 {
			fm["allowed-tools"] = sk.AllowedTools
		}
	}
	if _, ok := fm["name"].(string); !ok {
		fm["name"] = path0(sk.Name)
	}
	if _, ok := fm["description"].(string); !ok {
		fm["description"] = sk.Description
	}
	return fm
}

// path0 is a skill name's final segment (a plugin's skill "plugin:name"
// is named "name" in its frontmatter).
func path0(name string) string {
	return name[strings.LastIndexByte(name, ':')+1:]
}

// frontmatterBlock is the YAML between a SKILL.md's opening "---" line
// and the next one (after a BOM; CRLF line ends are normalised).
func frontmatterBlock(data []byte) ([]byte, bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return nil, false
	}
	rest := data[4:]
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) {
		return nil, true
	}
	i := bytes.Index(rest, []byte("\n---"))
	if i < 0 {
		return nil, false
	}
	return rest[:i+1], true
}
