package agui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/llm"
)

// An agent served to AG-UI clients: POST a RunAgentInput, read SSE events.
func Example() {
	a, _ := agent.New(context.Background(), agent.Config{Name: "greeter", Model: llm.NewScripted(llm.Say("Hello!"))})
	h, _ := agui.New(context.Background(), agui.Config{Runner: a})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(
		`{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"hi"}]}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			fmt.Println(data)
		}
	}
	// Output:
	// {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}
	// {"type":"TEXT_MESSAGE_START","messageId":"msg-r1-1","role":"assistant"}
	// {"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-r1-1","delta":"Hello!"}
	// {"type":"TEXT_MESSAGE_END","messageId":"msg-r1-1"}
	// {"type":"RUN_FINISHED","threadId":"t1","runId":"r1","result":"Hello!","outcome":{"type":"success"}}
}

// A tool the client defines (a frontend tool): the run that calls it
// finishes with the call pending; the client runs it and sends its result
// as a tool message, and the next run continues.
func Example_clientTool() {
	a, _ := agent.New(context.Background(), agent.Config{Name: "painter", Model: llm.NewScripted(
		llm.Calls(llm.CallTool("call_1", "pick_color", nil)), llm.SummarizeResults("Picked"))})
	h, _ := agui.New(context.Background(), agui.Config{Runner: a})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	tools := `"tools":[{"name":"pick_color","description":"Ask the user for a color."}]`
	messages := `{"id":"m1","role":"user","content":"paint it"}`
	last := func(body string) {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n\n")
		fmt.Println(strings.TrimPrefix(lines[len(lines)-1], "data: "))
	}
	last(`{"threadId":"t1","runId":"r1","messages":[` + messages + `],` + tools + `}`)
	messages += `,{"id":"a1","role":"assistant","toolCalls":[{"id":"call_1","type":"function","function":{"name":"pick_color","arguments":"{}"}}]}` +
		`,{"id":"t1","role":"tool","toolCallId":"call_1","content":"teal"}`
	last(`{"threadId":"t1","runId":"r2","messages":[` + messages + `],` + tools + `}`)
	// Output:
	// {"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"success","pendingToolCallIds":["call_1"]}}
	// {"type":"RUN_FINISHED","threadId":"t1","runId":"r2","result":"Picked (1 tool results, 0 errors)\n- pick_color: teal","outcome":{"type":"success"}}
}
