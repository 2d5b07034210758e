// Package check lints skill folders: it loads them with the skills
// package exactly as an agent would (leniently, with every deviation from
// the Agent Skills specification reported), then checks what the loader
// does not: links and symbolic links that leave a skill's folder, bundled
// files its instructions never mention, bodies over the specification's
// recommended size, descriptions that do not say when to use the skill,
// and scripts that run_skill_script could not execute.
//
// Each problem is a Finding with a file, a line, a stable Code and a
// Severity. In lenient mode deviations from the specification are
// warnings; in strict mode they are errors, since a strict agent refuses
// the skill. The skillcheck command (skills/cmd/skillcheck) prints the
// findings in the style of go vet or as JSON; the skilltest package runs
// the same checks from a Go test.
//
// The check never reads outside a skill's folder: bundled files are examined
// through an os.Root of the folder, so a symbolic link leaving it is
// reported, not followed.
//
// See docs/skills.md for every code and message.
package check
