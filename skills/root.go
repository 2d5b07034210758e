package skills

import (
	"io/fs"
	"path/filepath"
)

// Root is a place where skill folders are found: an OS directory (Path) or
// a directory of an fs.FS (FS and Dir), for skills compiled into a binary
// with embed. A root holds skill folders (each with a SKILL.md), possibly
// nested in grouping folders up to Config.MaxDepth, or is itself one skill
// folder.
type Root struct {
	// Path is an OS directory. Missing directories are skipped silently
	// (a user may have no ~/.claude/skills).
	Path string
	// FS is used when Path is empty; Dir is the directory within it ("" or
	// "." for its top).
	FS  fs.FS
	Dir string
	// Label names the root in warnings and file names ("project", "user",
	// "builtin"). Optional.
	Label string
}

// StandardRoots returns the conventional roots in precedence order: the
// project's .agents/skills and .claude/skills, then the user's
// ~/.agents/skills and ~/.claude/skills. Empty arguments are left out.
// Append explicit roots (or prepend them, to give them precedence).
func StandardRoots(projectDir, homeDir string) []Root {
	var roots []Root
	if projectDir != "" {
		roots = append(roots,
			Root{Path: filepath.Join(projectDir, ".agents", "skills"), Label: "project"},
			Root{Path: filepath.Join(projectDir, ".claude", "skills"), Label: "project"})
	}
	if homeDir != "" {
		roots = append(roots,
			Root{Path: filepath.Join(homeDir, ".agents", "skills"), Label: "user"},
			Root{Path: filepath.Join(homeDir, ".claude", "skills"), Label: "user"})
	}
	return roots
}
