package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/console"
	"github.com/switchboard-dev/switchboard/llm"
)

// A console over an embedded bus, with an agent whose runs the chat
// starts; a script starts one through the API.
func ExampleNew() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	a, err := agent.New(ctx, agent.Config{Name: "helper", Model: llm.NewScripted(llm.Say("Hello from the console.")),
		Events: b, Elicitor: b.Elicitor()})
	if err != nil {
		panic(err)
	}
	c, err := console.New(ctx, console.Config{Bus: b, Runner: a, Identity: "ada"})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	srv := httptest.NewServer(c.Handler()) // or http.ListenAndServe("127.0.0.1:7070", c.Handler())
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/runs", strings.NewReader(`{"input":"hi"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Switchboard-Console", "1") // a change needs it: no other site can send it
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	var started struct{ Run string }
	_ = json.NewDecoder(res.Body).Decode(&started)
	fmt.Println(res.StatusCode, strings.HasPrefix(started.Run, "run_"))
	// Output: 202 true
}
