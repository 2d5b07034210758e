package skills

import "github.com/switchboard-dev/switchboard/internal/skillcatalog"

// catalogOptions configures renderCatalog: the budget in characters (0:
// 12,000) and the activation tool's name (default "activate_skill").
type catalogOptions = skillcatalog.Options

// renderCatalog renders the skills as the <available_skills> list of the
// system prompt, within opts.Budget characters, every name and description
// escaped (see skillcatalog.Render for how a catalog over budget is shortened).
// Skills are listed in the order given.
func renderCatalog(skills []*Skill, opts catalogOptions) string {
	entries := make([]skillcatalog.Entry, len(skills))
	for i, s := range skills {
		entries[i] = skillcatalog.Entry{Name: s.Name, Description: s.Description}
	}
	return skillcatalog.Render(entries, opts)
}
