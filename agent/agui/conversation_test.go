package agui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// shape writes a history compactly: role, text, calls (name#id(args)) and
// results (id=content, ! for an error), one message per line.
func shape(hist []llm.Message) string {
	var b strings.Builder
	for _, m := range hist {
		fmt.Fprintf(&b, "%s:%q", m.Role, m.Text)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, " %s#%s(%s)", c.Name, c.ID, c.Args)
		}
		for _, r := range m.ToolResults {
			mark := ""
			if r.IsError {
				mark = "!"
			}
			fmt.Fprintf(&b, " %s:%s=%q%s", r.Name, r.CallID, r.Content, mark)
		}
		for _, p := range m.Parts {
			fmt.Fprintf(&b, " [%s %s %d %s]", p.Kind, p.MediaType, len(p.Data), p.URL)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestConversationOf(t *testing.T) {
	for _, tc := range []struct {
		name         string
		messages     string // the JSON array of RunAgentInput.messages
		context      string
		state        string
		history      string
		input        string
		instructions string
		trailing     int
		err          string
	}{
		{name: "one user message", messages: `[{"id":"1","role":"user","content":"hi"}]`, input: "hi"},
		{name: "turns", messages: `[
			{"id":"1","role":"user","content":"a"},
			{"id":"2","role":"assistant","content":"b"},
			{"id":"3","role":"user","content":"c"}]`,
			history: "user:\"a\"\nassistant:\"b\"\n", input: "c"},
		{name: "calls and results in call order", messages: `[
			{"id":"1","role":"user","content":"a"},
			{"id":"2","role":"assistant","toolCalls":[
				{"id":"x","type":"function","function":{"name":"f","arguments":"{\"q\":1}"}},
				{"id":"y","type":"function","function":{"name":"g","arguments":""}}]},
			{"id":"3","role":"tool","toolCallId":"y","content":"gy"},
			{"id":"4","role":"tool","toolCallId":"x","content":[{"type":"text","text":"fx"}]},
			{"id":"5","role":"user","content":"c"}]`,
			history: "user:\"a\"\nassistant:\"\" f#x({\"q\":1}) g#y({})\ntool:\"\" f:x=\"fx\" g:y=\"gy\"\n", input: "c"},
		{name: "an unanswered call gets a result", messages: `[
			{"id":"1","role":"user","content":"a"},
			{"id":"2","role":"assistant","content":"let me","toolCalls":[{"id":"x","type":"function","function":{"name":"f","arguments":"not json"}}]},
			{"id":"5","role":"user","content":"c"}]`,
			history: "user:\"a\"\nassistant:\"let me\" f#x(\"not json\")\ntool:\"\" f:x=\"" + noResult + "\"!\n", input: "c"},
		{name: "a failed tool", messages: `[
			{"id":"1","role":"user","content":"a"},
			{"id":"2","role":"assistant","toolCalls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"id":"3","role":"tool","toolCallId":"x","content":"","error":"boom"},
			{"id":"5","role":"user","content":"c"}]`,
			history: "user:\"a\"\nassistant:\"\" f#x({})\ntool:\"\" f:x=\"boom\"!\n", input: "c"},
		{name: "system, developer, context and state as instructions", messages: `[
			{"id":"s","role":"system","content":"Be kind."},
			{"id":"1","role":"user","content":"a"},
			{"id":"d","role":"developer","content":"Be brief."}]`,
			context: `[{"description":"tz","value":"UTC"}]`, state: `{"n":1,"switchboard":{"run":"x"}}`,
			input: "a", instructions: "Instructions from the application:\nBe kind.\n\nBe brief.\n\nContext from the application:\n- tz: UTC\n\nThe application's state (JSON):\n{\"n\":1}"},
		{name: "activity and reasoning left out", messages: `[
			{"id":"r","role":"reasoning","content":"hmm"},
			{"id":"a","role":"activity","activityType":"x","content":{}},
			{"id":"1","role":"user","content":"a"}]`, input: "a"},
		{name: "media parts", messages: `[{"id":"1","role":"user","content":[
			{"type":"text","text":"look"},
			{"type":"image","source":{"type":"data","value":"aGk=","mimeType":"image/png"}},
			{"type":"document","source":{"type":"url","value":"https://x/y.pdf","mimeType":"application/pdf"}},
			{"type":"audio","source":{"type":"file","value":"file-1","mimeType":"audio/wav"}}]}]`, input: "look"},
		{name: "trailing call and result", messages: `[
			{"id":"1","role":"user","content":"a"},
			{"id":"2","role":"assistant","toolCalls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"id":"3","role":"tool","toolCallId":"x","content":"r"}]`, input: "a", trailing: 2},
		{name: "no user message", messages: `[{"id":"2","role":"assistant","content":"b"}]`, history: "assistant:\"b\"\n"},
		{name: "result of no call", messages: `[
			{"id":"3","role":"tool","toolCallId":"x","content":"r"},
			{"id":"1","role":"user","content":"a"}]`, err: `"messages[0].toolCallId": "x" answers no call`},
		{name: "two results", messages: `[
			{"id":"2","role":"assistant","toolCalls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"id":"3","role":"tool","toolCallId":"x","content":"r"},
			{"id":"4","role":"tool","toolCallId":"x","content":"r"},
			{"id":"1","role":"user","content":"a"}]`, err: `call "x" has two results`},
		{name: "call id reused", messages: `[
			{"id":"2","role":"assistant","toolCalls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"id":"1","role":"user","content":"a"}]`, err: `call id "x" is used twice`},
		{name: "bad base64", messages: `[{"id":"1","role":"user","content":[{"type":"image","source":{"type":"data","value":"!!","mimeType":"image/png"}}]}]`,
			err: `"messages[0].content[0].source.value" is not base64`},
		{name: "unknown part", messages: `[{"id":"1","role":"user","content":[{"type":"hologram"}]}]`,
			err: `"messages[0].content[0].type": "hologram"`},
		{name: "content of another type", messages: `[{"id":"1","role":"user","content":7}]`,
			err: `"messages[0].content" is neither`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &RunAgentInput{ThreadID: "t", RunID: "r"}
			if err := json.Unmarshal([]byte(tc.messages), &in.Messages); err != nil {
				t.Fatal(err)
			}
			if tc.context != "" {
				if err := json.Unmarshal([]byte(tc.context), &in.Context); err != nil {
					t.Fatal(err)
				}
			}
			in.State = json.RawMessage(tc.state)
			c, err := conversationOf(in)
			if tc.err != "" {
				if err == nil || !errors.Is(err, failure.InvalidArgs) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want InvalidArgs with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := shape(c.history); got != tc.history {
				t.Fatalf("history\n%s\nwant\n%s", got, tc.history)
			}
			if c.input != tc.input || c.instructions != tc.instructions || len(c.trailing) != tc.trailing {
				t.Fatalf("input %q, instructions %q, %d trailing; want %q, %q, %d",
					c.input, c.instructions, len(c.trailing), tc.input, tc.instructions, tc.trailing)
			}
			if tc.name == "media parts" {
				if got := shape([]llm.Message{{Role: "user", Parts: c.parts}}); got != "user:\"\" [image image/png 2 ] [document application/pdf 0 https://x/y.pdf]\n" {
					t.Fatalf("parts %s", got)
				}
			}
		})
	}
}

// FuzzConversationOf: any input that decodes maps to a history whose every
// tool call has exactly one result, in the tool message right after it, or
// to an InvalidArgs failure; never a panic.
func FuzzConversationOf(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":"a"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"s","role":"system","content":"x"},{"id":"1","role":"user","content":"a"},
			{"id":"2","role":"assistant","toolCalls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"y","type":"function","function":{"name":"g","arguments":"{"}}]},
			{"id":"3","role":"tool","toolCallId":"y","content":"r","error":"e"},{"id":"4","role":"user","content":[{"type":"text","text":"b"},{"type":"image","source":{"type":"data","value":"aGk=","mimeType":"image/png"}}]}],
			"context":[{"description":"d","value":"v"}],"state":{"a":[1]},"tools":[{"name":"f","description":"d","parameters":{"type":"object"}}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"3","role":"tool","toolCallId":"y","content":"r"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"1","role":"user","content":[{"type":"video","source":{"type":"url","value":"u","mimeType":"video/mp4"}}]}],"state":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInput(strings.NewReader(string(data)), 1<<16)
		if err != nil {
			return
		}
		c, err := conversationOf(in)
		if err != nil {
			if !errors.Is(err, failure.InvalidArgs) {
				t.Fatalf("error %v is not InvalidArgs", err)
			}
			return
		}
		for i, m := range c.history {
			if len(m.ToolCalls) == 0 {
				if m.Role == llm.RoleTool && (i == 0 || len(c.history[i-1].ToolCalls) == 0) {
					t.Fatalf("message %d: results of no call: %s", i, shape(c.history))
				}
				continue
			}
			if i+1 >= len(c.history) || c.history[i+1].Role != llm.RoleTool || len(c.history[i+1].ToolResults) != len(m.ToolCalls) {
				t.Fatalf("message %d: calls without exactly one result each: %s", i, shape(c.history))
			}
			for k, call := range m.ToolCalls {
				if r := c.history[i+1].ToolResults[k]; r.CallID != call.ID || r.Name != call.Name {
					t.Fatalf("message %d: result %d answers %q, want %q", i, k, r.CallID, call.ID)
				}
				if !json.Valid(call.Args) {
					t.Fatalf("call %q: arguments %q are not JSON", call.ID, call.Args)
				}
			}
		}
	})
}
