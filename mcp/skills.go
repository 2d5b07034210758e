package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/skillwire"
)

// SkillsExtension is the identifier of the MCP skills extension
// (SEP-2640), under which a server serves Agent Skills as resources.
const SkillsExtension = skillwire.Extension

// Bounds of a [SkillsFS]: the extension's per-skill limits, and how many
// skills and listing pages one server may give.
const (
	maxSkillFiles = skillwire.MaxResources
	maxSkillBytes = skillwire.MaxTotalBytes
	maxSkills     = 10_000
	maxSkillPages = 1_000
	// skillReadTimeout bounds one file's read through the server.
	skillReadTimeout = time.Minute
)

// SkillsFS is the skills an MCP server serves, as a read-only file tree
// for the skills loader: each skill a folder at its skill path
// (skill://acme/billing/refunds/SKILL.md is acme/billing/refunds/SKILL.md),
// its files read through the server with resources/read when opened and
// checked against the digest and size the server's skill entry gives. So
// a server's skills load under the same limits and checks as a folder:
//
//	fsys, err := m.SkillsFS(ctx, "docs")
//	if err != nil { ... }
//	ts, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{FS: fsys, Label: "mcp:docs"}}})
//
// Its catalog is read once, by [Manager.SkillsFS]; call it again for a
// fresh one. It implements fs.FS, fs.ReadDirFS and fs.StatFS.
type SkillsFS struct {
	m       *Manager
	server  string
	nodes   map[string]*skillNode // by slash path; "." is the top
	refused []error
}

type skillNode struct {
	dir      bool
	children []string // names, sorted (directories)
	uri      string   // files
	digest   string   // "sha256:<hex>", or "" when the server gives none
	size     int64    // -1 when unknown
}

// SkillsFS reads the skills catalog of server: the skills/list entries
// when it declares the skills extension, else its skill:// resources
// (each .../SKILL.md a skill, the other skill:// resources under it its
// files, unverified). An entry that breaks the extension's rules (a path
// not ending in the skill's name, a file outside the skill, past 512 files
// or 16 MiB) is left out and reported by [SkillsFS.Refused]; a server
// with no skills gives an empty tree.
func (m *Manager) SkillsFS(ctx context.Context, server string) (*SkillsFS, error) {
	f := &SkillsFS{m: m, server: server, nodes: map[string]*skillNode{".": {dir: true}}}
	var entries []skillwire.Skill
	ext := false
	err := m.do(ctx, server, "list skills", func(ctx context.Context, sess *gomcp.ClientSession) error {
		entries = entries[:0]
		if ir := sess.InitializeResult(); ir != nil && ir.Capabilities != nil && ir.Capabilities.Extensions[skillwire.Extension] != nil {
			ext = true
			cursor := ""
			for range maxSkillPages {
				res, err := gomcp.CallCustomMethod[*skillwire.ListParams, *skillwire.ListResult](ctx, sess, skillwire.MethodList, &skillwire.ListParams{Cursor: cursor})
				if err != nil {
					return err
				}
				entries = append(entries, res.Skills...)
				if res.NextCursor == "" || len(entries) >= maxSkills {
					return nil
				}
				cursor = res.NextCursor
			}
			return nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !ext {
		if entries, err = m.skillsFromResources(ctx, server); err != nil {
			return nil, err
		}
	}
	for _, e := range entries[:min(len(entries), maxSkills)] {
		if err := f.add(e, ext); err != nil {
			f.refused = append(f.refused, err)
		}
	}
	for _, n := range f.nodes {
		slices.Sort(n.children)
	}
	return f, nil
}

// skillsFromResources builds entries from a server's skill:// resources,
// for a server without the extension: sizes as listed, no digests.
func (m *Manager) skillsFromResources(ctx context.Context, server string) ([]skillwire.Skill, error) {
	var mains []string
	files := map[string][]skillwire.Resource{}
	var all []*gomcp.Resource
	for r, err := range m.Resources(ctx, server) {
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(r.URI, "skill://") {
			continue
		}
		if len(all) >= maxSkills*maxSkillFiles {
			break
		}
		all = append(all, r)
		if strings.HasSuffix(r.URI, "/SKILL.md") {
			mains = append(mains, r.URI)
		}
	}
	var out []skillwire.Skill
	for _, main := range mains {
		root := strings.TrimSuffix(main, "SKILL.md")
		for _, r := range all {
			if strings.HasPrefix(r.URI, root) {
				size := r.Size
				if size == 0 {
					size = -1
				}
				files[main] = append(files[main], skillwire.Resource{URI: r.URI, Size: size})
			}
		}
		out = append(out, skillwire.Skill{URI: main, Frontmatter: map[string]any{"name": path.Base(strings.TrimSuffix(root, "/"))},
			Resources: &skillwire.Resources{Files: files[main]}})
	}
	return out, nil
}

// add places one skill entry in the tree.
func (f *SkillsFS) add(e skillwire.Skill, verified bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("server %s: skill %s: %s", f.server, e.URI, fmt.Sprintf(format, args...))
	}
	dir, ok := skillDir(e.URI)
	if !ok {
		return bad("the URI is not <scheme>://<skill-path>/SKILL.md")
	}
	name, _ := e.Frontmatter["name"].(string)
	if path.Base(dir) != name {
		return bad("the path's last segment %q is not the skill's name %q", path.Base(dir), name)
	}
	if e.Resources == nil {
		return bad("the entry has no resources; it must not be loaded")
	}
	if e.Resources.Dynamic {
		return bad("its files are dynamic (no digests), which this host does not load")
	}
	if len(e.Resources.Files) > maxSkillFiles {
		return bad("%d files, more than the %d a skill may have", len(e.Resources.Files), maxSkillFiles)
	}
	var total int64
	files := map[string]*skillNode{}
	for _, r := range e.Resources.Files {
		rel, ok := strings.CutPrefix(r.URI, strings.TrimSuffix(e.URI, "SKILL.md"))
		if !ok || rel == "" {
			return bad("file %s is not inside the skill", r.URI)
		}
		if rel, ok = unescapePath(rel); !ok || !fs.ValidPath(rel) {
			return bad("file %s has no valid relative path", r.URI)
		}
		if verified && (!validDigest(r.Digest) || r.Size < 0) {
			return bad("file %s has no valid sha256 digest and size", r.URI)
		}
		total += max(r.Size, 0)
		files[rel] = &skillNode{uri: r.URI, digest: r.Digest, size: r.Size}
	}
	if total > maxSkillBytes {
		return bad("%d bytes of files, more than the %d a skill may have", total, maxSkillBytes)
	}
	if files["SKILL.md"] == nil {
		return bad("its files do not include its SKILL.md")
	}
	for rel, n := range files {
		p := path.Join(dir, rel)
		if old := f.nodes[p]; old != nil && (old.dir || old.uri != n.uri) {
			return bad("file %s collides with another skill's", p)
		}
	}
	for rel, n := range files {
		p := path.Join(dir, rel)
		if f.nodes[p] != nil {
			continue // a nested skill's file, listed by both skills
		}
		f.mkdirs(path.Dir(p))
		f.link(p, n)
	}
	return nil
}

// skillDir is the skill path of a SKILL.md URI: skill://a/b/c/SKILL.md is
// a/b/c (another scheme's likewise).
func skillDir(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	p, ok := strings.CutSuffix(u.Host+u.EscapedPath(), "/SKILL.md")
	if !ok {
		return "", false
	}
	p, ok = unescapePath(p)
	if !ok || !fs.ValidPath(p) || p == "." {
		return "", false
	}
	return p, true
}

func unescapePath(p string) (string, bool) {
	u, err := url.PathUnescape(p)
	return u, err == nil
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

func (f *SkillsFS) mkdirs(dir string) {
	if dir == "." || f.nodes[dir] != nil {
		return
	}
	f.mkdirs(path.Dir(dir))
	f.link(dir, &skillNode{dir: true})
}

func (f *SkillsFS) link(p string, n *skillNode) {
	f.nodes[p] = n
	parent := f.nodes[path.Dir(p)]
	parent.children = append(parent.children, path.Base(p))
}

// Refused returns why each refused skill entry was left out.
func (f *SkillsFS) Refused() []error { return slices.Clone(f.refused) }

// Open opens a folder, or reads a file through the server and checks it
// against its entry's digest and size: a file that does not match is
// refused (it may be stale, corrupt or tampered with), never used.
func (f *SkillsFS) Open(name string) (fs.File, error) {
	n, err := f.node("open", name)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return &skillDirFile{fsys: f, name: name, n: n}, nil
	}
	data, err := f.read(n)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &skillFileHandle{info: skillInfo{name: path.Base(name), size: int64(len(data))}, r: bytes.NewReader(data)}, nil
}

// ReadDir lists a folder.
func (f *SkillsFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := f.node("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, 0, len(n.children))
	for _, c := range n.children {
		out = append(out, fs.FileInfoToDirEntry(f.info(path.Join(name, c))))
	}
	return out, nil
}

// Stat describes a file or folder from the catalog, without a read (a
// file of a server without the extension whose size was not listed is
// read to learn it).
func (f *SkillsFS) Stat(name string) (fs.FileInfo, error) {
	n, err := f.node("stat", name)
	if err != nil {
		return nil, err
	}
	if !n.dir && n.size < 0 {
		data, err := f.read(n)
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
		return skillInfo{name: path.Base(name), size: int64(len(data))}, nil
	}
	return f.info(name), nil
}

func (f *SkillsFS) info(name string) skillInfo {
	n := f.nodes[name]
	return skillInfo{name: path.Base(name), dir: n.dir, size: max(n.size, 0)}
}

func (f *SkillsFS) node(op, name string) (*skillNode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n := f.nodes[name]
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// read fetches a file's bytes and checks them.
func (f *SkillsFS) read(n *skillNode) ([]byte, error) {
	ctx, cancel := context.WithTimeout(f.m.ctx, skillReadTimeout)
	defer cancel()
	parts, err := f.m.ReadResource(ctx, f.server, n.uri)
	if err != nil {
		return nil, err
	}
	var data []byte
	for _, p := range parts {
		if p.URI != "" && p.URI != n.uri {
			continue
		}
		if p.Data != nil {
			data = append(data, p.Data...)
		} else {
			data = append(data, p.Text...)
		}
		if len(data) > maxSkillBytes {
			break
		}
	}
	mismatch := func(msg string) error {
		return &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: f.server, Op: "read skill file",
			Message: fmt.Sprintf("%s: %s; the file is not used (call SkillsFS again for a fresh catalog)", n.uri, msg)}
	}
	if n.size >= 0 && int64(len(data)) != n.size {
		return nil, mismatch(fmt.Sprintf("%d bytes read, the skill's entry says %d", len(data), n.size))
	}
	if len(data) > maxSkillBytes {
		return nil, mismatch(fmt.Sprintf("more than the %d bytes a skill may hold", maxSkillBytes))
	}
	if n.digest != "" {
		sum := sha256.Sum256(data)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != n.digest {
			return nil, mismatch(fmt.Sprintf("digest %s, the skill's entry says %s", got, n.digest))
		}
	}
	return data, nil
}

type skillInfo struct {
	name string
	dir  bool
	size int64
}

func (i skillInfo) Name() string { return i.name }
func (i skillInfo) Size() int64  { return i.size }
func (i skillInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i skillInfo) ModTime() time.Time { return time.Time{} }
func (i skillInfo) IsDir() bool        { return i.dir }
func (i skillInfo) Sys() any           { return nil }

type skillFileHandle struct {
	info skillInfo
	r    *bytes.Reader
}

func (h *skillFileHandle) Stat() (fs.FileInfo, error)                { return h.info, nil }
func (h *skillFileHandle) Read(p []byte) (int, error)                { return h.r.Read(p) }
func (h *skillFileHandle) Seek(off int64, whence int) (int64, error) { return h.r.Seek(off, whence) }
func (h *skillFileHandle) ReadAt(p []byte, off int64) (int, error)   { return h.r.ReadAt(p, off) }
func (h *skillFileHandle) Close() error                              { return nil }

type skillDirFile struct {
	fsys *SkillsFS
	name string
	n    *skillNode
	off  int
	mu   sync.Mutex
}

func (d *skillDirFile) Stat() (fs.FileInfo, error) { return d.fsys.info(d.name), nil }
func (d *skillDirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}
func (d *skillDirFile) Close() error { return nil }

// ReadDir lists the folder's entries, n at a time (n <= 0: all).
func (d *skillDirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rest := d.n.children[d.off:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.off += len(rest)
	out := make([]fs.DirEntry, 0, len(rest))
	for _, c := range rest {
		out = append(out, fs.FileInfoToDirEntry(d.fsys.info(path.Join(d.name, c))))
	}
	return out, nil
}

// SkillEntry is a server's entry of one skill, as skills/get gives it:
// the URI of its SKILL.md, its frontmatter verbatim, and its files with
// their digests, or Dynamic when the server can publish none.
type SkillEntry struct {
	URI         string
	Frontmatter map[string]any
	Files       []SkillFile
	Dynamic     bool
}

// SkillFile is one file of a [SkillEntry]: its URI, the SHA-256 digest of
// its bytes ("sha256:<hex>") and their length.
type SkillFile struct {
	URI    string
	Digest string
	Size   int64
}

// Skill asks server (skills/get) for the entry of the skill whose
// SKILL.md is at uri, listed or not. A server without the skills
// extension gives a failure of kind NotFound.
func (m *Manager) Skill(ctx context.Context, server, uri string) (*SkillEntry, error) {
	var out *SkillEntry
	err := m.do(ctx, server, "get skill", func(ctx context.Context, sess *gomcp.ClientSession) error {
		if ir := sess.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Extensions[skillwire.Extension] == nil {
			return &failure.Error{Kind: failure.NotFound, Source: failure.SourceMCP, Name: server, Op: "get skill",
				Message: "the server does not declare the skills extension (" + skillwire.Extension + ")"}
		}
		res, err := gomcp.CallCustomMethod[*skillwire.GetParams, *skillwire.GetResult](ctx, sess, skillwire.MethodGet, &skillwire.GetParams{URI: uri})
		if err != nil {
			return err
		}
		e := res.Skill
		out = &SkillEntry{URI: e.URI, Frontmatter: e.Frontmatter}
		if e.Resources == nil {
			return &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: server, Op: "get skill",
				Message: uri + ": the entry has no resources"}
		}
		out.Dynamic = e.Resources.Dynamic
		for _, f := range e.Resources.Files {
			out.Files = append(out.Files, SkillFile(f))
		}
		return nil
	})
	return out, err
}
