package skills

import "github.com/switchboard-dev/switchboard/skills/internal/catalog"

// catalogOptions configures renderCatalog: the budget in characters (0:
// 12,000) and the activation tool's name (default "activate_skill").
type catalogOptions = catalog.Options

// renderCatalog renders the skills as the <available_skills> list of the
// system prompt, within opts.Budget characters, every name and description
// escaped (see catalog.Render for how a catalog over budget is shortened).
// Skills are listed in the order given.
func renderCatalog(skills []*Skill, opts catalogOptions) string {
	entries := make([]catalog.Entry, len(skills))
	for i, s := range skills {
		entries[i] = catalog.Entry{Name: s.Name, Description: s.Description}
	}
	return catalog.Render(entries, opts)
}
