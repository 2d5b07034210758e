package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
)

// gmResponse is a GenerateContentResponse: the whole answer, or one chunk
// of a stream.
type gmResponse struct {
	Candidates     []gmCandidate     `json:"candidates"`
	PromptFeedback *gmPromptFeedback `json:"promptFeedback"`
	UsageMetadata  *gmUsage          `json:"usageMetadata"`
	ModelVersion   string            `json:"modelVersion"`
	ResponseID     string            `json:"responseId"`
	// Error is set on an error event of a stream.
	Error *apiError `json:"error"`
}

type gmCandidate struct {
	Content struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
}

type gmPromptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

// gmUsage is usageMetadata: thoughts are counted apart from the
// candidates, and the cached tokens are part of the prompt's.
type gmUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

// usage is u in the llm convention: output includes the thoughts.
func (u gmUsage) usage() llm.Usage {
	return llm.Usage{InputTokens: u.PromptTokenCount + u.ToolUsePromptTokenCount,
		OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CacheReadTokens: u.CachedContentTokenCount, ReasoningTokens: u.ThoughtsTokenCount}
}

// synthesizedPrefix begins the ID of a call Gemini gave no id.
const synthesizedPrefix = "gemini-call-"

func synthesized(id string) bool { return strings.HasPrefix(id, synthesizedPrefix) }

// callSeed makes the ids of calls without one: stable for one answer and
// distinct between the turns of a conversation.
type callSeed struct {
	turn     int    // messages before the answer
	response string // the answer's responseId
}

func (s callSeed) with(responseID string) callSeed { s.response = responseID; return s }

func (s callSeed) id(i int, c *gmCall) string {
	h := sha256.New()
	h.Write([]byte(s.response + "\x00" + strconv.Itoa(s.turn) + "\x00" + strconv.Itoa(i) + "\x00" + c.Name + "\x00"))
	h.Write(c.Args)
	return synthesizedPrefix + strconv.Itoa(i) + "-" + hex.EncodeToString(h.Sum(nil)[:6])
}

// providerEnvelope is Message.Provider for Gemini: the answer's parts as
// received, for their thought signatures. An object, so that other
// providers (which keep arrays of their own blocks there) ignore it.
type providerEnvelope struct {
	Gemini *struct {
		Parts []json.RawMessage `json:"parts"`
	} `json:"gemini"`
}

// storedParts returns the parts kept in a message's Provider, or nil.
func storedParts(raw json.RawMessage) []json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var env providerEnvelope
	if json.Unmarshal(raw, &env) != nil || env.Gemini == nil || len(env.Gemini.Parts) == 0 {
		return nil
	}
	for _, p := range env.Gemini.Parts {
		if !json.Valid(p) {
			return nil
		}
	}
	return env.Gemini.Parts
}

// decodeParts builds the assistant message of an answer's parts: thoughts
// become Reasoning, other text the Text, function calls ToolCalls (args
// kept as sent; none is an empty object). When a part carries a thought
// signature or a thought, the parts are kept in Provider.
func decodeParts(parts []json.RawMessage, seed callSeed) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	var text, reasoning strings.Builder
	keep := false
	for _, raw := range parts {
		var p gmPart
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		if p.ThoughtSignature != "" || p.Thought {
			keep = true
		}
		switch {
		case p.FunctionCall != nil:
			c := p.FunctionCall
			args := c.Args
			if t := bytes.TrimSpace(args); len(t) == 0 || bytes.Equal(t, []byte("null")) {
				args = json.RawMessage("{}")
			}
			id := c.ID
			if id == "" {
				id = seed.id(len(m.ToolCalls), c)
			}
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: id, Name: c.Name, Args: args})
		case p.Thought:
			reasoning.WriteString(p.Text)
		default:
			text.WriteString(p.Text)
		}
	}
	m.Text, m.Reasoning = text.String(), reasoning.String()
	if keep {
		env := map[string]map[string][]json.RawMessage{"gemini": {"parts": parts}}
		if b, err := json.Marshal(env); err == nil {
			m.Provider = b
		}
	}
	return m
}
