package agui

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// Conversational is a Runner that continues a conversation from its
// history: an *agent.Agent is one. The handler gives such a Runner the
// whole RunAgentInput.messages of a thread (NewSessionFrom, then the last
// user message as the run's input); any other Runner gets the last user
// message alone.
type Conversational interface {
	// NewSessionFrom starts a session that continues history.
	NewSessionFrom(history []llm.Message) *agent.Session
}

var _ Conversational = (*agent.Agent)(nil)

// conversation is what a run takes from RunAgentInput.messages, context
// and state.
type conversation struct {
	// history is the conversation before the last user message, in llm's
	// roles; every tool call in it has exactly one result.
	history []llm.Message
	// input and parts are the last user message's text and media.
	input string
	parts []llm.Part
	// instructions are the client's system and developer messages, its
	// context items and its state, for the run's system prompt.
	instructions string
	// trailing are the messages after the last user message but its
	// system and developer ones (an assistant message and the client's
	// results for its calls), as the client sent them.
	trailing []Message
}

// noResult is the result given to a call of the history that the client
// sent no result for (providers refuse a call without one).
const noResult = "(no result: the application sent none for this call)"

// conversationOf maps in's messages to a run's history and input.
func conversationOf(in *RunAgentInput) (conversation, error) {
	var c conversation
	last := -1
	for i, m := range in.Messages {
		if m.Role == "user" {
			last = i
		}
	}
	var sys []string
	upTo := len(in.Messages)
	if last >= 0 {
		upTo = last
	}
	var err error
	if c.history, sys, err = historyOf(in.Messages[:upTo]); err != nil {
		return c, err
	}
	if last >= 0 {
		u := in.Messages[last]
		if c.input, c.parts, err = userContent(u, last); err != nil {
			return c, err
		}
		for _, m := range in.Messages[last+1:] {
			if m.Role == "system" || m.Role == "developer" {
				sys = append(sys, m.Text())
			} else {
				c.trailing = append(c.trailing, m)
			}
		}
	}
	c.instructions = instructionsOf(sys, in.Context, in.State)
	return c, nil
}

// historyOf maps messages to llm history: user and assistant messages as
// they are, consecutive tool messages as one tool message answering the
// calls of the assistant message before them (in its call order; a call
// left unanswered gets noResult), system and developer messages as
// instructions (sys). Activity and reasoning messages are left out.
func historyOf(msgs []Message) (hist []llm.Message, sys []string, err error) {
	var open []llm.ToolCall                // the calls of the last assistant message
	results := map[string]llm.ToolResult{} // their results so far
	closeCalls := func() {
		if len(open) == 0 {
			return
		}
		tm := llm.Message{Role: llm.RoleTool}
		for _, c := range open {
			r, ok := results[c.ID]
			if !ok {
				r = llm.ToolResult{CallID: c.ID, Name: c.Name, Content: noResult, IsError: true}
			}
			tm.ToolResults = append(tm.ToolResults, r)
		}
		hist = append(hist, tm)
		open, results = nil, map[string]llm.ToolResult{}
	}
	answered := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer":
			sys = append(sys, m.Text())
		case "user":
			closeCalls()
			text, parts, err := userContent(m, i)
			if err != nil {
				return nil, nil, err
			}
			hist = append(hist, llm.Message{Role: llm.RoleUser, Text: text, Parts: parts})
		case "assistant":
			closeCalls()
			am := llm.Message{Role: llm.RoleAssistant, Text: m.Text()}
			for _, tc := range m.ToolCalls {
				if answered[tc.ID] || slices.ContainsFunc(am.ToolCalls, func(c llm.ToolCall) bool { return c.ID == tc.ID }) {
					return nil, nil, bad("field \"messages[%d].toolCalls\": call id %q is used twice", i, tc.ID)
				}
				am.ToolCalls = append(am.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: argsOf(tc.Function.Arguments)})
			}
			if am.Text == "" && len(am.ToolCalls) == 0 {
				continue
			}
			hist = append(hist, am)
			open = am.ToolCalls
		case "tool":
			k := slices.IndexFunc(open, func(c llm.ToolCall) bool { return c.ID == m.ToolCallID })
			if k < 0 {
				return nil, nil, bad("field \"messages[%d].toolCallId\": %q answers no call of the assistant message before it", i, m.ToolCallID)
			}
			if _, dup := results[m.ToolCallID]; dup {
				return nil, nil, bad("field \"messages[%d].toolCallId\": call %q has two results", i, m.ToolCallID)
			}
			results[m.ToolCallID] = toolResultOf(m, open[k].Name)
			answered[m.ToolCallID] = true
		}
	}
	closeCalls()
	return hist, sys, nil
}

// toolResultOf is the llm result of the tool message m answering a call of
// the tool named name.
func toolResultOf(m Message, name string) llm.ToolResult {
	r := llm.ToolResult{CallID: m.ToolCallID, Name: name, Content: m.Text()}
	if m.Error != "" {
		r.IsError = true
		if r.Content == "" {
			r.Content = m.Error
		} else {
			r.Content += "\n" + m.Error
		}
	}
	return r
}

// argsOf is a call's arguments as JSON: "" is {}, and text that is not
// JSON is kept as a JSON string (llm.ToolCall.Args may be malformed, but
// providers send it back as JSON).
func argsOf(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return json.RawMessage(`{}`)
	case json.Valid([]byte(s)):
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// userContent is the text and media of user message m (messages[i]):
// string content is its text; of an array, the text parts are joined by
// newlines and the image, audio, video and document parts become llm
// parts (inline data decoded, URLs kept; provider file handles, which
// only their provider reads, are left out).
func userContent(m Message, i int) (string, []llm.Part, error) {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil, nil
	}
	var raw []struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Source *struct {
			Type     string `json:"type"`
			Value    string `json:"value"`
			MimeType string `json:"mimeType"`
		} `json:"source"`
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(m.Content, &raw); err != nil {
		return "", nil, bad("field \"messages[%d].content\" is neither a string nor an array of content parts", i)
	}
	var texts []string
	var parts []llm.Part
	for j, p := range raw {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image", "audio", "video", "document":
			if p.Source == nil {
				return "", nil, bad("field \"messages[%d].content[%d].source\" is required", i, j)
			}
			kind := llm.KindOfMediaType(p.Source.MimeType)
			switch p.Type {
			case "image":
				kind = llm.PartImage
			case "audio":
				kind = llm.PartAudio
			}
			part := llm.Part{Kind: kind, MediaType: p.Source.MimeType, Name: p.Filename}
			switch p.Source.Type {
			case "data":
				data, err := base64.StdEncoding.DecodeString(p.Source.Value)
				if err != nil {
					return "", nil, bad("field \"messages[%d].content[%d].source.value\" is not base64: %v", i, j, err)
				}
				part.Data = data
			case "url":
				part.URL = p.Source.Value
			default:
				continue
			}
			parts = append(parts, part)
		default:
			return "", nil, bad("field \"messages[%d].content[%d].type\": %q is not an AG-UI content part", i, j, p.Type)
		}
	}
	return strings.Join(texts, "\n"), parts, nil
}

// instructionsOf words the client's system and developer messages, its
// context items and its state (leaving out the handler's own
// "switchboard" key) for the run's system prompt.
func instructionsOf(sys []string, ctx []ContextItem, state json.RawMessage) string {
	var b strings.Builder
	section := func(title string) {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(title)
	}
	var texts []string
	for _, s := range sys {
		if s = strings.TrimSpace(s); s != "" {
			texts = append(texts, s)
		}
	}
	if len(texts) > 0 {
		section("Instructions from the application:\n")
		b.WriteString(strings.Join(texts, "\n\n"))
	}
	if len(ctx) > 0 {
		section("Context from the application:")
		for _, c := range ctx {
			fmt.Fprintf(&b, "\n- %s: %s", c.Description, c.Value)
		}
	}
	var st map[string]json.RawMessage
	if json.Unmarshal(state, &st) == nil {
		delete(st, "switchboard")
		if len(st) > 0 {
			js, _ := json.Marshal(st)
			section("The application's state (JSON):\n")
			b.Write(js)
		}
	}
	return b.String()
}
