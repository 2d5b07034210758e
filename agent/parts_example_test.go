package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// visionModel is the scripted model, saying it accepts images (a provider's
// model says so through llm.Describer).
type visionModel struct{ *llm.Scripted }

func (visionModel) Capabilities() llm.Capabilities {
	return llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage}}
}

// A run takes an image with its prompt through WithInput; the model gets
// it as a part of the first user message. A PDF, which this model does not
// accept, reaches it as text describing it.
func ExampleWithInput() {
	model := visionModel{llm.NewScripted(llm.React(func(req *llm.Request) llm.Step {
		for _, p := range req.Messages[0].Parts {
			fmt.Println(p.Kind, p.Describe())
		}
		return llm.Say("a bar chart")
	}))}
	a, _ := agent.New(context.Background(), agent.Config{Model: model})
	ctx := agent.WithInput(context.Background(), agent.Input{Parts: []llm.Part{
		llm.ImagePart("image/png", []byte("\x89PNG...")),
		llm.DocumentPart("q3.pdf", "application/pdf", []byte("%PDF-1.7 ...")),
	}})
	ans, _ := a.Run(ctx, "What does the chart show?")
	fmt.Println(ans.Text)
	// Output:
	// image [image image/png, 7 bytes]
	// text [document "q3.pdf" application/pdf, 12 bytes] (not shown: the model does not take this part)
	// a bar chart
}

// A tool decides, through its Call, whether an image it returns reaches
// the model as an image (package mcp keeps such parts out of its spill to
// files); the agent turns the Result's media parts into the tool result's
// llm parts either way.
func ExampleCall_Accepts() {
	shot := agent.NewFuncTool(agent.ToolSpec{Name: "screenshot", Description: "Take a screenshot."},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			call, _ := agent.CallFromContext(ctx)
			fmt.Println("image as a part:", call.Accepts(llm.PartImage, 48_213))
			return &agent.Result{Parts: []agent.Part{{Type: agent.PartImage, MIMEType: "image/png", Data: make([]byte, 48_213)}}}, nil
		})
	model := visionModel{llm.NewScripted(llm.Calls(llm.CallTool("c1", "screenshot", nil)), llm.React(func(req *llm.Request) llm.Step {
		tr := req.Messages[len(req.Messages)-1].ToolResults[0]
		fmt.Println(tr.Parts[0].Describe())
		return llm.Say("done")
	}))}
	a, _ := agent.New(context.Background(), agent.Config{Model: model, Tools: []agent.Tool{shot}, Permissions: agent.AllowAll()})
	_, _ = a.Run(context.Background(), "look at the screen")
	// Output:
	// image as a part: true
	// [image image/png, 48213 bytes]
}
