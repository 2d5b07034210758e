package eval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
)

// The ADK evalset format (google/adk-python, src/google/adk/evaluation:
// eval_set.py, eval_case.py): an EvalSet of EvalCases, each a conversation
// of Invocations whose user_content and final_response are genai Contents
// and whose intermediate_data lists the tool_uses in order.
type adkSet struct {
	EvalSetID   string    `json:"eval_set_id"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	EvalCases   []adkCase `json:"eval_cases"`
}

type adkCase struct {
	EvalID               string          `json:"eval_id"`
	Conversation         []adkInvocation `json:"conversation"`
	ConversationScenario json.RawMessage `json:"conversation_scenario"`
}

type adkInvocation struct {
	UserContent      adkContent  `json:"user_content"`
	FinalResponse    *adkContent `json:"final_response"`
	IntermediateData *struct {
		ToolUses []struct {
			Name string                     `json:"name"`
			Args map[string]json.RawMessage `json:"args"`
		} `json:"tool_uses"`
	} `json:"intermediate_data"`
}

type adkContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text       string `json:"text"`
		InlineData *struct {
			MimeType string `json:"mime_type"`
			Data     []byte `json:"data"`
		} `json:"inline_data"`
		FileData *struct {
			MimeType string `json:"mime_type"`
			FileURI  string `json:"file_uri"`
		} `json:"file_data"`
	} `json:"parts"`
}

func (c adkContent) input() Input {
	var in Input
	var texts []string
	for _, p := range c.Parts {
		switch {
		case p.InlineData != nil:
			in.Parts = append(in.Parts, llm.Part{Kind: llm.KindOfMediaType(p.InlineData.MimeType),
				MediaType: p.InlineData.MimeType, Data: p.InlineData.Data})
		case p.FileData != nil:
			in.Parts = append(in.Parts, llm.Part{Kind: llm.KindOfMediaType(p.FileData.MimeType),
				MediaType: p.FileData.MimeType, URL: p.FileData.FileURI})
		case p.Text != "":
			texts = append(texts, p.Text)
		}
	}
	in.Text = strings.Join(texts, "\n")
	return in
}

// parseADK turns an ADK evalset into a Set: each case's last invocation is
// the scored input (its tool_uses an exact trajectory, with the recorded
// arguments, and its final_response a rubric for the judge, as ADK's
// response match compares meaning), the earlier ones its Before inputs.
// Cases given as a conversation_scenario (for ADK's user simulator) have no
// fixed input and are refused by name.
func parseADK(b []byte) (*Set, error) {
	var a adkSet
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("not an ADK evalset: %w", err)
	}
	s := &Set{Name: a.Name}
	if s.Name == "" {
		s.Name = a.EvalSetID
	}
	if a.Description != nil {
		s.Description = *a.Description
	}
	for _, ac := range a.EvalCases {
		if len(ac.Conversation) == 0 {
			if len(ac.ConversationScenario) > 0 {
				s.Skipped = append(s.Skipped, Skip{Case: ac.EvalID,
					Reason: "an ADK conversation_scenario needs a user simulator; only static conversations are imported"})
				continue
			}
			return nil, fmt.Errorf("ADK case %q has no conversation", ac.EvalID)
		}
		last := ac.Conversation[len(ac.Conversation)-1]
		c := Case{Name: ac.EvalID, Input: last.UserContent.input()}
		for _, inv := range ac.Conversation[:len(ac.Conversation)-1] {
			c.Before = append(c.Before, inv.UserContent.input().Text)
		}
		if last.IntermediateData != nil {
			t := &Trajectory{Match: MatchExact, Calls: []ExpectedCall{}}
			for _, u := range last.IntermediateData.ToolUses {
				t.Calls = append(t.Calls, ExpectedCall{Tool: u.Name, Args: u.Args})
			}
			c.Trajectory = t
		}
		if last.FinalResponse != nil {
			if want := last.FinalResponse.input().Text; want != "" {
				c.Answer = &Answer{Rubric: "The answer says the same as this reference answer (wording may differ): " + want}
			}
		}
		s.Cases = append(s.Cases, c)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}
