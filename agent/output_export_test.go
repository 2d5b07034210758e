package agent

import (
	"encoding/json"

	"github.com/switchboard-dev/switchboard/llm"
)

// CheckAnswer validates text as a's runs validate a typed answer, for the
// benchmark of its cost.
func CheckAnswer(a *Agent, o *llm.Output, text string) (json.RawMessage, error) {
	return checkAnswer(a.schemas, o, text)
}
