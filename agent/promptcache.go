package agent

import "github.com/switchboard-dev/switchboard/llm"

// request is the model request of one turn: the prompt and the agent's
// settings (temperature, reasoning, prompt caching).
//
// The cache key is the run's conversation id (its gen_ai.conversation.id:
// Input.Conversation, or else the session's), so that the provider routes the turns of one conversation, which share
// their prompt prefix, to the same cache. With Config.NoPromptCache the
// request asks for no cache breakpoints and names no conversation.
func (r *run) request(hist []llm.Message, defs []llm.ToolDef, onText func(string)) *llm.Request {
	c := &r.a.cfg
	req := &llm.Request{System: r.system, Messages: hist, Tools: defs, MaxTokens: c.MaxTokens, OnText: onText,
		Temperature: c.Temperature, Reasoning: c.Reasoning, NoCache: c.NoPromptCache}
	if !c.NoPromptCache && r.s != nil {
		req.CacheKey = r.conversationID()
	}
	return req
}

// conversationID is the conversation the run belongs to: its
// Input.Conversation, or else its session's id.
func (r *run) conversationID() string {
	if r.in.Conversation != "" {
		return r.in.Conversation
	}
	return r.s.conversationID()
}
