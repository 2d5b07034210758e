package guard

import "github.com/switchboard-dev/switchboard/agent"

// Named returns the built-in guards that need no configuration, by the
// names a skill declares them with in its SKILL.md (metadata key
// switchboard.guards, see skills.Config.Guards): "pii" ([NewPII] with the
// defaults: redacts) and "injection" ([NewInjection] with the defaults:
// trips). Each call returns new guards; add your own (a [NewDenyList], a
// [NewJudge]) to the map under names of your choosing.
func Named() map[string]agent.Guard {
	return map[string]agent.Guard{
		"pii":       NewPII(PIIConfig{}),
		"injection": NewInjection(InjectionConfig{}),
	}
}
