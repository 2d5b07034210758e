package check

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/switchboard-dev/switchboard/skills"
)

// scriptExts are the extensions of files under scripts/ that are meant to
// be run.
var scriptExts = map[string]bool{
	".sh": true, ".bash": true, ".zsh": true, ".py": true, ".rb": true, ".pl": true,
	".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".php": true, ".lua": true,
}

// skipEntry reports entries the loader neither lists nor searches.
func skipEntry(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__"
}

// files examines the files bundled with s through an os.Root of its
// folder: symbolic links, scripts, and whether text (the SKILL.md) or the
// body's links mention each file. It returns the number of bundled files
// (those activation lists). b is nil when the body was refused.
func (c *checker) files(s *skills.Skill, b *skills.Body, text string) int {
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		c.r.add(Finding{File: c.display(s.Dir), Code: codeUnreadable, Skill: s.Name, Message: fmt.Sprintf("the skill folder cannot be opened: %v", err)})
		return 0
	}
	defer root.Close()
	var links []string
	if b != nil {
		for _, l := range b.Links {
			if l.Path != "" && l.Path != "." {
				links = append(links, l.Path)
			}
		}
	}
	n := 0
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." || p == "SKILL.md" || p == "skill.md" && isMain(s, p) {
			return nil
		}
		file := c.display(filepath.Join(s.Dir, filepath.FromSlash(p)))
		skip := skipEntry(d.Name())
		var mode fs.FileMode
		if d.Type()&fs.ModeSymlink != 0 {
			// Every link is checked, hidden ones included; none is
			// followed out of the folder.
			st, err := root.Stat(filepath.FromSlash(p))
			switch {
			case err == nil:
				mode = st.Mode()
			case errors.Is(err, fs.ErrNotExist):
				if !skip {
					c.r.add(Finding{File: file, Code: codeSymlinkBroken, Skill: s.Name,
						Message: fmt.Sprintf("%s is a symbolic link to nothing", p)})
				}
				return nil
			default:
				c.r.add(Finding{File: file, Code: codeSymlinkOutside, Skill: s.Name,
					Message: fmt.Sprintf("%s is a symbolic link that leaves the skill folder; the model cannot read it and it was not followed (bundle a copy instead)", p)})
				return nil
			}
		} else {
			if skip && d.IsDir() {
				return fs.SkipDir
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			mode = info.Mode()
		}
		if skip || !mode.IsRegular() {
			return nil
		}
		n++
		c.script(root, s, p, file, mode)
		if b != nil && !mentioned(text, links, p) {
			c.r.add(Finding{File: file, Code: codeUnmentioned, Skill: s.Name,
				Message: fmt.Sprintf("%s is bundled but SKILL.md never mentions it (by its path, by its folder written with a trailing slash, or by a link), so the model may never read it", p)})
		}
		return nil
	})
	return n
}

// script checks a bundled regular file that is meant to be run: a file of
// scripts/ with a script extension (or none), or any file starting with
// #!. run_skill_script executes it directly, without a shell.
func (c *checker) script(root *os.Root, s *skills.Skill, p, file string, mode fs.FileMode) {
	ext := strings.ToLower(path.Ext(p))
	meant := path.Dir(p) == "scripts" && (ext == "" || scriptExts[ext])
	shebang := false
	if f, err := openRegular(root, filepath.FromSlash(p)); err == nil {
		var head [2]byte
		n, _ := io.ReadFull(f, head[:])
		shebang = n == 2 && string(head[:]) == "#!"
		f.Close()
	}
	if !meant && !shebang {
		return
	}
	if !shebang {
		c.r.add(Finding{File: file, Line: 1, Code: codeScriptNoShebang, Skill: s.Name,
			Message: fmt.Sprintf("%s has no #! line; run_skill_script runs scripts directly, without a shell, so the first line must name the interpreter (#!/usr/bin/env python3)", p)})
	}
	if mode.Perm()&0o111 == 0 && runtime.GOOS != "windows" {
		c.r.add(Finding{File: file, Code: codeScriptNotExecutable, Skill: s.Name,
			Message: fmt.Sprintf("%s is not executable; run_skill_script refuses it (chmod +x, and commit the mode)", p)})
	}
}

// isMain reports whether p is the skill's main file.
func isMain(s *skills.Skill, p string) bool { return filepath.Base(s.File) == p }

// errNotRegular: a file that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens a regular file through root without blocking (a named
// pipe would block the open until a writer appeared).
func openRegular(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, errNotRegular
	}
	return f, nil
}
