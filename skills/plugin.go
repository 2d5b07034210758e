package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
)

// Claude Code plugins. A folder holding .claude-plugin/plugin.json is a
// plugin; the skills under it are named plugin:skill, as Claude Code names
// them, so that same-named skills of different plugins both load.

// pluginDir is the folder of a plugin's manifest.
const pluginDir = ".claude-plugin"

// maxManifestBytes caps the plugin.json read.
const maxManifestBytes = 64 << 10

// maxPluginName bounds a plugin's name.
const maxPluginName = 64

// errManifest: a plugin.json that cannot be used.
var errManifest = errors.New("the plugin manifest cannot be used")

// parsePluginManifest returns the plugin's name from a plugin.json.
func parsePluginManifest(data []byte) (string, error) {
	if len(data) > maxManifestBytes {
		return "", fmt.Errorf("%w: over %d bytes", errManifest, maxManifestBytes)
	}
	var m struct {
		Name json.RawMessage `json:"name"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("%w: %v", errManifest, err)
	}
	var name string
	if len(m.Name) == 0 || json.Unmarshal(m.Name, &name) != nil {
		return "", fmt.Errorf("%w: no \"name\" string", errManifest)
	}
	if name == "" || len(name) > maxPluginName {
		return "", fmt.Errorf("%w: the name must be 1-%d characters", errManifest, maxPluginName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return "", fmt.Errorf("%w: the name %q holds characters other than letters, digits, '-', '_' and '.'", errManifest, name)
		}
	}
	return name, nil
}

// pluginOS returns the name of the plugin whose folder is dir, or "".
func (l *loader) pluginOS(dir string) string {
	file := filepath.Join(dir, pluginDir, "plugin.json")
	if name, ok := l.plugins()[file]; ok {
		return name
	}
	f, _, err := openSkillFile(file) // regular files only, never a link, never blocking
	if err != nil {
		if err == errSymlink {
			err = errors.New("it is a symbolic link")
		}
		if !errors.Is(err, fs.ErrNotExist) {
			l.discoverWarn(file, "the plugin manifest cannot be read: %v; its skills keep their own names", err)
		}
		l.pluginNames[file] = ""
		return ""
	}
	defer f.Close()
	return l.plugin(file, f)
}

// pluginFS returns the name of the plugin whose folder is dir in r.FS.
func (l *loader) pluginFS(r Root, dir string) string {
	p := path.Join(dir, pluginDir, "plugin.json")
	file := l.fsName(r, p)
	if name, ok := l.plugins()[file]; ok {
		return name
	}
	st, err := fs.Stat(r.FS, p)
	if err != nil || !st.Mode().IsRegular() {
		l.pluginNames[file] = ""
		return ""
	}
	f, err := r.FS.Open(p)
	if err != nil {
		l.pluginNames[file] = ""
		return ""
	}
	defer f.Close()
	return l.plugin(file, f)
}

func (l *loader) plugins() map[string]string {
	if l.pluginNames == nil {
		l.pluginNames = map[string]string{}
	}
	return l.pluginNames
}

// plugin reads a manifest (at most maxManifestBytes+1 bytes) and records
// the plugin's name.
func (l *loader) plugin(file string, f io.Reader) string {
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	name := ""
	if err == nil {
		name, err = parsePluginManifest(data)
	}
	if err != nil {
		l.discoverWarn(file, "%v; the plugin's skills keep their own names", err)
	}
	l.pluginNames[file] = name
	return name
}
