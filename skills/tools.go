package skills

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/skills/internal/grant"
)

// Tool names (before Config.ToolPrefix).
const (
	ToolActivate  = "activate_skill"
	ToolReadFile  = "read_skill_file"
	ToolRunScript = "run_skill_script"
)

// skillTool is one of the toolset's tools.
type skillTool struct {
	spec agent.ToolSpec
	call func(ctx context.Context, args json.RawMessage) (*agent.Result, error)
}

// Spec describes the tool.
func (s *skillTool) Spec() agent.ToolSpec { return s.spec }

// Call runs the tool.
func (s *skillTool) Call(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
	return s.call(ctx, args)
}

func (t *Toolset) buildTools() []agent.Tool {
	prov := func(tool string) agent.Provenance {
		return agent.Provenance{Kind: failure.SourceSkill, Name: t.cfg.Name, Tool: tool}
	}
	p := t.cfg.ToolPrefix
	tools := []agent.Tool{
		&skillTool{spec: agent.ToolSpec{
			Name:        p + ToolActivate,
			Description: "Activate a skill from <available_skills> by its exact name: returns its instructions, its base directory and the list of its bundled files. Call it before doing a task a skill covers.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"The skill's exact name, as listed in <available_skills>."}},"required":["name"],"additionalProperties":false}`),
			Source:      prov(ToolActivate),
			ReadOnly:    true,
		}, call: t.withGuards(p+ToolActivate, t.callActivate)},
		&skillTool{spec: agent.ToolSpec{
			Name:        p + ToolReadFile,
			Description: "Read a file bundled with a skill (a reference, a template, a script's source), by its path relative to the skill's base directory. Text is returned as is, binary files as base64. Large files are returned in pages: pass the offset the previous page gave.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"skill":{"type":"string","description":"The skill's exact name."},"path":{"type":"string","description":"The file's path relative to the skill's base directory, e.g. references/forms.md."},"offset":{"type":"integer","minimum":0,"description":"Byte offset to start reading at (default 0)."}},"required":["skill","path"],"additionalProperties":false}`),
			Source:      prov(ToolReadFile),
			ReadOnly:    true,
		}, call: t.withGuards(p+ToolReadFile, t.callReadFile)},
	}
	if t.cfg.Scripts {
		tools = append(tools, &skillTool{spec: agent.ToolSpec{
			Name:        p + ToolRunScript,
			Description: "Run a script bundled with a skill, after the user approves it. The file is executed directly (no shell) in the skill's base directory with the given arguments; stdout, stderr and the exit status are returned.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"skill":{"type":"string","description":"The skill's exact name."},"path":{"type":"string","description":"The script's path relative to the skill's base directory, e.g. scripts/fill.py."},"args":{"type":"array","items":{"type":"string"},"description":"Arguments passed to the script (no shell expansion)."}},"required":["skill","path"],"additionalProperties":false}`),
			Source:      prov(ToolRunScript),
			Executes:    true,
		}, call: t.withGuards(p+ToolRunScript, t.callRunScript)})
	}
	return tools
}

func badArgs(tool, skill, msg string) *failure.Error {
	return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceSkill, Name: skill, Tool: tool, Message: msg}
}

// Activation is the outcome of activating a skill.
type Activation struct {
	// Skill is the activated skill's metadata; Body its instructions.
	Skill *Skill
	Body  *Body
	// BaseDir is the skill's folder (an OS path, or "<label>:<path>" in an
	// fs.FS root).
	BaseDir string
	// Files are the bundled files, relative to BaseDir; More is set when the
	// list was cut at Config.MaxListedFiles.
	Files []File
	More  bool
	// Granted are the tool-name patterns pre-approved from allowed-tools;
	// Skipped the entries that could not be, each with the reason (see
	// Config.ToolAliases and docs/skills.md).
	Granted []string
	Skipped []string
}

// Activate loads a skill's body and files and, when ctx belongs to an agent
// tool call, pre-approves its allowed-tools for the session and puts the
// guards the skill declares (Skill.Guards, Config.Guards) over them.
func (t *Toolset) Activate(ctx context.Context, name string) (*Activation, error) {
	s, b, err := t.Body(ctx, name)
	if err != nil {
		return nil, err
	}
	a := &Activation{Skill: s, Body: b, BaseDir: t.baseDir(s)}
	if d, err := t.openSkill(s); err == nil {
		a.Files, a.More = listFiles(d.fsys, t.cfg.MaxListedFiles)
		d.close()
	}
	a.Granted, a.Skipped = grant.Patterns(s.AllowedTools, t.cfg.ToolAliases)
	for _, sk := range a.Skipped {
		t.log.Warn().Str("toolset", t.cfg.Name).Str("skill", s.Name).Str("code", string(warnAllowedToolSkip)).Msg(sk)
	}
	if len(a.Granted) > 0 {
		if call, ok := agent.CallFromContext(ctx); ok {
			call.Grant(a.Granted...)
			if err := call.GuardTools(a.Granted, t.guardNames(s)...); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

func (t *Toolset) baseDir(s *Skill) string {
	r := t.cfg.Roots[s.rootIdx]
	if r.Path != "" {
		return s.Dir
	}
	if r.Label != "" {
		return r.Label + ":" + s.Dir
	}
	return s.Dir
}

func (t *Toolset) callActivate(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
	tool := t.cfg.ToolPrefix + ToolActivate
	var args struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &args); err != nil || args.Name == "" {
		return nil, badArgs(tool, "", "pass the skill's exact name as {\"name\": \"...\"}")
	}
	a, err := t.Activate(ctx, args.Name)
	if err != nil {
		fe := failure.Wrap(failure.ToolError, failure.SourceSkill, err)
		fe.Tool = tool
		if fe.Name == "" {
			fe.Name = args.Name
		}
		return nil, fe
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %q is active.\nBase directory: %s\n", a.Skill.Name, a.BaseDir)
	if len(a.Files) > 0 {
		fmt.Fprintf(&b, "Bundled files (paths relative to the base directory; read them with %s):\n", t.cfg.ToolPrefix+ToolReadFile)
		for _, f := range a.Files {
			fmt.Fprintf(&b, "- %s (%d bytes)\n", f.Path, f.Size)
		}
		if a.More {
			fmt.Fprintf(&b, "- … more files not listed\n")
		}
	} else {
		b.WriteString("Bundled files: none\n")
	}
	if len(a.Granted) > 0 {
		fmt.Fprintf(&b, "Pre-approved tools for this session (allowed-tools): %s\n", strings.Join(a.Granted, " "))
	}
	b.WriteString("\nInstructions (the SKILL.md body):\n\n")
	b.WriteString(a.Body.Markdown)
	return agent.TextResult(b.String()), nil
}

// cleanRel validates a path relative to a skill folder: no absolute paths,
// no "..", no NUL; backslashes read as slashes.
func cleanRel(p string) (string, error) {
	if p == "" {
		return "", errors.New("the path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("the path holds a NUL byte")
	}
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("absolute paths are not allowed: %w", errOutside)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", fmt.Errorf("\"..\" is not allowed: %w", errOutside)
		}
	}
	p = path.Clean(p)
	if !fs.ValidPath(p) || p == "." {
		return "", errors.New("the path is not a file path")
	}
	return p, nil
}

// ReadFile reads up to Config.MaxReadBytes of a bundled file from offset.
// It returns the data and the file's size.
func (t *Toolset) ReadFile(ctx context.Context, skill, rel string, offset int64) ([]byte, int64, error) {
	tool := t.cfg.ToolPrefix + ToolReadFile
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	s, ok := t.Skill(skill)
	if !ok {
		return nil, 0, badArgs(tool, skill, fmt.Sprintf("there is no skill named %q; use a name from <available_skills>", skill))
	}
	p, err := cleanRel(rel)
	if err != nil {
		return nil, 0, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceSkill, Name: skill, Tool: tool,
			Message: fmt.Sprintf("%q cannot be read: %v; use a path relative to the skill's base directory", rel, err), Err: err}
	}
	d, err := t.openSkill(s)
	if err != nil {
		return nil, 0, &failure.Error{Kind: failure.ToolError, Source: failure.SourceSkill, Name: skill, Tool: tool, Message: "the skill's folder cannot be opened", Err: err}
	}
	defer d.close()
	f, st, err := d.openFile(p, true)
	if err != nil {
		return nil, 0, t.openError(tool, skill, rel, st, err)
	}
	defer f.Close()
	if offset < 0 || offset > st.Size() {
		return nil, st.Size(), badArgs(tool, skill, fmt.Sprintf("offset %d is outside the file (%d bytes)", offset, st.Size()))
	}
	if offset > 0 {
		if sk, ok := f.(io.Seeker); ok {
			_, err = sk.Seek(offset, io.SeekStart)
		} else {
			_, err = io.CopyN(io.Discard, f, offset)
		}
		if err != nil {
			return nil, 0, &failure.Error{Kind: failure.ToolError, Source: failure.SourceSkill, Name: skill, Tool: tool, Message: "the file cannot be read", Err: err}
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(t.cfg.MaxReadBytes)))
	if err != nil {
		return nil, 0, &failure.Error{Kind: failure.ToolError, Source: failure.SourceSkill, Name: skill, Tool: tool, Message: "the file cannot be read", Err: err}
	}
	return data, st.Size(), nil
}

// openError is the failure for a bundled file that cannot be opened.
func (t *Toolset) openError(tool, skill, rel string, st fs.FileInfo, err error) error {
	fail := func(kind failure.Kind, msg string, err error) error {
		return &failure.Error{Kind: kind, Source: failure.SourceSkill, Name: skill, Tool: tool, Message: msg, Err: err}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(failure.InvalidArgs, fmt.Sprintf("%q is not a file of skill %q", rel, skill), err)
	case err == errNotRegular && st != nil && st.IsDir():
		return badArgs(tool, skill, fmt.Sprintf("%q is a folder; activate the skill to see its files", rel))
	case err == errNotRegular:
		return fail(failure.InvalidArgs, fmt.Sprintf("%q is not a regular file (a named pipe, a device or a socket); only regular files are read", rel), err)
	case err == errHardLink:
		return fail(failure.InvalidArgs, fmt.Sprintf("%q cannot be used: %v", rel, err), fmt.Errorf("%w: %w", errOutside, err))
	}
	// os.Root refuses links that resolve outside the folder.
	return fail(failure.InvalidArgs, fmt.Sprintf("%q cannot be read: it is not inside skill %q's folder", rel, skill), fmt.Errorf("%w: %w", errOutside, err))
}

func (t *Toolset) callReadFile(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
	var args struct {
		Skill  string `json:"skill"`
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, badArgs(t.cfg.ToolPrefix+ToolReadFile, "", "pass {\"skill\": \"...\", \"path\": \"...\"}")
	}
	data, size, err := t.ReadFile(ctx, args.Skill, args.Path, args.Offset)
	if err != nil {
		return nil, err
	}
	end := args.Offset + int64(len(data))
	binary := !utf8.Valid(data) || strings.IndexByte(string(data), 0) >= 0
	if binary && end < size {
		// A page may end inside a rune: trim it to stay text.
		for k := 1; k < utf8.UTFMax && len(data) > k; k++ {
			if utf8.Valid(data[:len(data)-k]) && strings.IndexByte(string(data), 0) < 0 {
				data, end, binary = data[:len(data)-k], end-int64(k), false
				break
			}
		}
	}
	var b strings.Builder
	if binary {
		mt := mime.TypeByExtension(path.Ext(args.Path))
		if mt == "" {
			mt = "application/octet-stream"
		}
		if res := filePart(ctx, args.Path, mt, data, args.Offset == 0 && end == size); res != nil {
			return res, nil
		}
		fmt.Fprintf(&b, "[binary file %s (%s), bytes %d-%d of %d, base64]\n", args.Path, mt, args.Offset, end, size)
		b.WriteString(base64.StdEncoding.EncodeToString(data))
	} else {
		b.Write(data)
	}
	if end < size {
		fmt.Fprintf(&b, "\n[truncated: bytes %d-%d of %d shown; call %s again with offset %d for more]", args.Offset, end, size, t.cfg.ToolPrefix+ToolReadFile, end)
	}
	return agent.TextResult(b.String()), nil
}
