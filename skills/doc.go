// Package skills loads Agent Skills (folders holding a SKILL.md file: YAML
// frontmatter, then markdown instructions, plus bundled references, scripts
// and assets) and serves them to an agent as a toolset.
//
// A Toolset implements agent.Toolset with its two optional methods,
// Instructions and Changed:
//
//   - Instructions returns a catalog of the available skills for the system
//     prompt, within a character budget and escaped so that no skill can
//     inject markup.
//   - The activate_skill tool loads a skill's body by its known name and
//     returns its instructions, its base directory and its bundled files; it
//     pre-approves the skill's allowed-tools for the session through
//     agent.Call.Grant (never overriding a deny).
//   - The read_skill_file tool reads a bundled file, confined to the skill's
//     folder (os.Root for directories, fs.FS semantics for embedded trees).
//   - The run_skill_script tool, only when Config.Scripts is set, runs a
//     bundled script after an explicit permission ask, with a timeout, an
//     output cap, no shell and a scrubbed environment.
//
// Discovery finds the layouts of real repositories: skill folders up to six
// levels under a root (Claude Code plugin marketplaces, the agents' own
// .claude/skills and .agents/skills, .curated and .system collections), a
// lower-case skill.md, and skills of Claude Code plugins named
// plugin:skill. Only regular files are read, never blocking on a named
// pipe, and every later access goes through open handles (os.Root), so a
// folder or script swapped for a symbolic link is not followed out of the
// roots.
//
// Loading is lenient: real SKILL.md files break the letter of the
// specification (a BOM, CRLF or CR line endings, long descriptions, a name
// that differs from its folder, allowed-tools as a list, nested metadata,
// unquoted colons, YAML 1.1 booleans, an optional field whose YAML cannot
// be read), and each such file loads with a Warning naming the file and
// line. Only what cannot be used is refused: a skill without a readable
// name or description. In
// strict mode (Config.Strict) every deviation from the specification
// refuses the skill.
//
// Cost: startup reads each SKILL.md only up to its closing frontmatter
// delimiter; the body is read on activation. Both are cached and invalidated
// by the file's modification time and size. With Config.Watch the toolset
// watches its roots with fsnotify and reports changes on Changed.
//
// See docs/skills.md for the catalog format, the allowed-tools mapping and
// the security model of scripts.
package skills
