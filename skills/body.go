package skills

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Body is a skill's instructions, read on activation.
type Body struct {
	// Markdown is the SKILL.md body after the frontmatter, with LF line
	// endings.
	Markdown string `json:"markdown"`
	// Line is the SKILL.md line where the body starts (the line after the
	// closing ---).
	Line int `json:"line"`
	// Outline lists the body's headings.
	Outline []Heading `json:"outline,omitempty"`
	// Links are the body's relative links and images (bundled files).
	Links []Link `json:"links,omitempty"`
	// Warnings are problems of the body: links to missing files, case
	// mismatches, links leaving the folder.
	Warnings []Warning `json:"warnings,omitempty"`
}

// Heading is one heading of a skill's body.
type Heading struct {
	// Level is 1 for #, 2 for ##, and so on.
	Level int `json:"level"`
	// Text is the heading's plain text.
	Text string `json:"text"`
	// Line is the SKILL.md line of the heading.
	Line int `json:"line"`
}

// Link is a relative link (or image) of a skill's body.
type Link struct {
	// Target is the destination as written.
	Target string `json:"target"`
	// Path is the bundled file it names, relative to the skill folder
	// ("" when the link leaves the folder).
	Path string `json:"path,omitempty"`
	// Line is the SKILL.md line of the link.
	Line int `json:"line"`
}

// File is a file bundled with a skill.
type File struct {
	// Path is relative to the skill's folder, with slashes.
	Path string `json:"path"`
	// Size is in bytes.
	Size int64 `json:"size"`
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// placeholderRE matches the skill-folder placeholders of other agents:
// {baseDir} (Claude's skills) and ${CLAUDE_SKILL_DIR} (Claude skillCode), with
// the slash after them.
var placeholderRE = regexp.MustCompile(`(?:\{baseDir\}|\$\{CLAUDE_SKILL_DIR\})(/?)`)

// expandPlaceholders rewrites "{baseDir}/x" and "${CLAUDE_SKILL_DIR}/x" as
// "x", the path relative to the skill folder that read_skill_file and
// run_skill_script take (and scripts run in the skill folder), and a bare
// placeholder as ".".
func expandPlaceholders(body []byte) []byte {
	if bytes.IndexByte(body, '{') < 0 || !placeholderRE.Match(body) {
		return body
	}
	return placeholderRE.ReplaceAllFunc(body, func(m []byte) []byte {
		if m[len(m)-1] == '/' {
			return nil
		}
		return []byte(".")
	})
}

// parseBody parses the body of data, a whole SKILL.md; fsys is the
// skill's folder, where links are looked up.
func parseBody(data []byte, fsys fs.FS, file string) (*Body, error) {
	if b := firstBad(data); b != nil {
		return nil, b(file)
	}
	h, _, _, err := scanHeader(data, true)
	if err != nil {
		return nil, loadError(file, 0, err, "")
	}
	body := data[h.end:]
	if bytes.IndexByte(body, '\r') >= 0 {
		body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
		body = bytes.ReplaceAll(body, []byte("\r"), []byte("\n"))
	}
	body = expandPlaceholders(body)
	b := &Body{Markdown: string(body), Line: h.endLine + 1}
	lineAt := func(off int) int { return h.endLine + 1 + bytes.Count(body[:off], []byte("\n")) }
	doc := goldmark.New().Parser().Parse(text.NewReader(body))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch x := n.(type) {
		case *ast.Heading:
			line := 0
			if x.Lines().Len() > 0 {
				line = lineAt(x.Lines().At(0).Start)
			}
			b.Outline = append(b.Outline, Heading{Level: x.Level, Text: inlineText(x, body), Line: line})
		case *ast.Link:
			b.addLink(fsys, file, string(x.Destination), linkLine(x, body, string(x.Destination), lineAt))
		case *ast.Image:
			b.addLink(fsys, file, string(x.Destination), linkLine(x, body, string(x.Destination), lineAt))
		}
		return ast.WalkContinue, nil
	})
	return b, nil
}

// inlineText concatenates the text of n's inline children.
func inlineText(n ast.Node, src []byte) string {
	var sb strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			sb.Write(t.Segment.Value(src))
			if t.SoftLineBreak() {
				sb.WriteByte(' ')
			}
		case *ast.String:
			sb.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return sb.String()
}

// linkLine finds the line of an inline link: the destination's first
// occurrence in its enclosing block.
func linkLine(n ast.Node, src []byte, dest string, lineAt func(int) int) int {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			start := p.Lines().At(0).Start
			if i := bytes.Index(src[start:], []byte(dest)); i >= 0 && dest != "" {
				return lineAt(start + i)
			}
			return lineAt(start)
		}
	}
	return 0
}

// addLink records a relative link and checks that it names a bundled file.
func (b *Body) addLink(fsys fs.FS, file, dest string, line int) {
	if dest == "" || strings.HasPrefix(dest, "#") || schemeRE.MatchString(dest) {
		return
	}
	warn := func(code skillCode, format string, args ...any) {
		b.Warnings = append(b.Warnings, newWarning(file, line, code, format, args...))
	}
	p := dest
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	p = strings.ReplaceAll(p, "\\", "/")
	if strings.HasPrefix(p, "/") {
		b.Links = append(b.Links, Link{Target: dest, Line: line})
		warn(warnLinkOutside, "link %q is an absolute path; bundled files are linked relative to the skill folder", dest)
		return
	}
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") {
		b.Links = append(b.Links, Link{Target: dest, Line: line})
		warn(warnLinkOutside, "link %q leaves the skill folder", dest)
		return
	}
	b.Links = append(b.Links, Link{Target: dest, Path: p, Line: line})
	if p == "." {
		return
	}
	dir := "."
	for _, part := range strings.Split(p, "/") {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			warn(warnLinkMissing, "link %q names a file the skill does not bundle", dest)
			return
		}
		exact, fold := false, ""
		for _, e := range entries {
			if e.Name() == part {
				exact = true
				break
			}
			if fold == "" && strings.EqualFold(e.Name(), part) {
				fold = e.Name()
			}
		}
		if !exact {
			if fold != "" {
				warn(warnLinkCase, "link %q differs in case from the bundled %q; it breaks on case-sensitive file systems", dest, path.Join(dir, fold))
			} else {
				warn(warnLinkMissing, "link %q names a file the skill does not bundle", dest)
			}
			return
		}
		dir = path.Join(dir, part)
	}
}

// errOverCap reports a file over a size cap.
var errOverCap = fmt.Errorf("over the size cap: %w", errTooLarge)

// listFiles lists the files bundled in fsys (a skill's folder), skipping
// SKILL.md, hidden entries and symbolic links that cannot be opened (such
// as those leaving the folder), up to max entries.
func listFiles(fsys fs.FS, max int) (files []File, more bool) {
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "__pycache__" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || p == skillFile || p == skillFileLower {
			return nil
		}
		st, err := fs.Stat(fsys, p) // follows links, and fails for links out of an os.Root
		if err != nil || st.IsDir() {
			return nil
		}
		if len(files) >= max {
			more = true
			return fs.SkipAll
		}
		files = append(files, File{Path: p, Size: st.Size()})
		return nil
	})
	return files, more
}
