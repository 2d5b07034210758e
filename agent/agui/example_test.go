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
