package ollama_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
)

// A typed answer from a local model: the schema goes as Ollama's "format",
// which holds the model to it (here a local stand-in for the server).
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Format json.RawMessage `json:"format"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Format) == 0 {
			http.Error(w, `{"error":"no format"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":"llama3.1","message":{"role":"assistant","content":"{\"age\": 22, \"available\": false}"},
			"done":true,"done_reason":"stop","prompt_eval_count":34,"eval_count":12}`)
	}))
	defer srv.Close()

	model, err := ollama.New(provider.Config{BaseURL: srv.URL, Model: "llama3.1"}) // default http://localhost:11434
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := model.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "Ollama is 22 years old and busy saving the world."}},
		Output: &llm.Output{Schema: json.RawMessage(`{"type":"object","properties":{"age":{"type":"integer"},` +
			`"available":{"type":"boolean"}},"required":["age","available"]}`)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var answer struct {
		Age       int  `json:"age"`
		Available bool `json:"available"`
	}
	err = json.Unmarshal([]byte(resp.Message.Text), &answer)
	fmt.Println(model.Name(), answer.Age, answer.Available, resp.Usage.Total(), err)
	// Output: ollama/llama3.1 22 false 46 <nil>
}
