package anthropic

// Prompt caching. The API caches a request's prefix, in the order tools,
// system, messages, up to each block marked cache_control, and reads a
// later request's prefix from the cache when its bytes are the same up to
// one of that request's breakpoints (or one of the 20 or so blocks before
// it). The provider marks, unless Request.NoCache:
//
//  1. the last tool definition the model can see (not a deferred one, nor
//     the tool an answer is forced through), so that the tool set is
//     cached on its own and survives a change of system prompt;
//  2. the system prompt;
//  3. the last block of the message before the newest user turn: the
//     history up to the previous turn, which the previous request cached
//     (its breakpoint 4) and this one reads;
//  4. the last block of the newest message, so that the next request,
//     which repeats this whole conversation, reads it from the cache.
//
// That is at most 4, the API's limit; a mark goes only on a block that
// can carry one (never an empty one, nor a thinking or server tool block,
// which the API does not let us mark), else on the last such block before
// it in the same message, else nowhere.

// maxBreakpoints is the API's limit of cache_control marks per request.
const maxBreakpoints = 4

// cacheControl is a breakpoint's mark: {"type":"ephemeral"} (a 5-minute
// cache, renewed by every read).
type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// markCache places the breakpoints on a request built without any, and
// returns how many it placed.
func markCache(r *anthropicRequest) int {
	n := 0
	mark := func(cc **cacheControl) {
		if n < maxBreakpoints && *cc == nil {
			*cc = ephemeral
			n++
		}
	}
	for i := len(r.Tools) - 1; i >= 0; i-- {
		if !r.Tools[i].DeferLoading && r.Tools[i].Type == "" {
			mark(&r.Tools[i].CacheControl)
			break
		}
	}
	if b := markable(r.System); b != nil {
		mark(&b.CacheControl)
	}
	last := len(r.Messages) - 1
	newestUser := last
	for newestUser >= 0 && r.Messages[newestUser].Role != "user" {
		newestUser--
	}
	if prev := newestUser - 1; prev >= 0 {
		if b := markable(r.Messages[prev].Content); b != nil {
			mark(&b.CacheControl)
		}
	}
	if last >= 0 {
		if b := markable(r.Messages[last].Content); b != nil {
			mark(&b.CacheControl)
		}
	}
	return n
}

// markable returns the last block of blocks that may carry a breakpoint,
// or nil.
func markable(blocks []anthropicBlock) *anthropicBlock {
	for i := len(blocks) - 1; i >= 0; i-- {
		b := &blocks[i]
		if b.raw != nil {
			continue
		}
		switch b.Type {
		case "text":
			if b.Text != "" {
				return b
			}
		case "image", "document", "tool_use", "tool_result":
			return b
		}
	}
	return nil
}
