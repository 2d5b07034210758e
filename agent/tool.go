package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

// Provenance says where a tool (and so its results) comes from. It travels
// with every result to the model, so the model can weigh what it reads.
type Provenance struct {
	// Kind is the kind of source, in the vocabulary of failures:
	// [failure.SourceTool] (Go code in the process, the default),
	// [failure.SourceMCP], [failure.SourceSkill], [failure.SourceA2A],
	// [failure.SourceAgent] (the agent's own tools) or
	// [failure.SourceHandoff].
	Kind failure.Source `json:"kind"`
	// Name is the server, skill or peer within Kind.
	Name string `json:"name,omitempty"`
	// Tool is the tool's own name at its source (before prefixing).
	Tool string `json:"tool,omitempty"`
}

// String is "kind:name:tool", leaving out empty parts (e.g. "mcp:files:read").
func (p Provenance) String() string {
	s := string(p.Kind)
	if p.Name != "" {
		s += ":" + p.Name
	}
	if p.Tool != "" {
		s += ":" + p.Tool
	}
	return s
}

// BreakerKey is the circuit-breaker key, and so the failure source and
// name, of the tool named tool from this source: one circuit per MCP server,
// skill set or peer (Kind and Name), and one per tool for Go tools (Kind
// [failure.SourceTool] or empty) and sources without a name. An agent's
// runs and package mcp/server key their failure policy with it, so that they
// share a circuit.
func (p Provenance) BreakerKey(tool string) failure.Key {
	if p.Kind == "" || p.Kind == failure.SourceTool || p.Name == "" {
		return failure.Key{Source: failure.SourceTool, Name: tool}
	}
	return failure.Key{Source: p.Kind, Name: p.Name}
}

// ToolSpec describes a tool.
type ToolSpec struct {
	// Name is unique across all toolsets of an agent: the name the model uses.
	Name string `json:"name"`
	// Title is the tool's display name, for people (an MCP tool's title,
	// else its annotations' title; an A2A skill's name): the agent's tool
	// search indexes it ([ToolIndex]) but does not send it to the model;
	// package mcp/server offers it as the MCP tool's title.
	Title string `json:"title,omitempty"`
	// Description tells the model what the tool does.
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments object. Nil means any
	// object.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema, if set, is the JSON Schema of the tool's structured
	// result (an MCP tool's output schema): the result then carries that
	// value as a PartJSON part. A typed agent offered with [AsTool]
	// declares its answer's schema here.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Source is the tool's provenance.
	Source Provenance `json:"source"`
	// ReadOnly marks a tool that changes nothing (MCP readOnlyHint); the
	// default permission policy allows such tools.
	ReadOnly bool `json:"read_only,omitempty"`
	// Destructive marks a tool that may delete or overwrite (MCP
	// destructiveHint); the default permission policy asks before it runs.
	Destructive bool `json:"destructive,omitempty"`
	// Idempotent marks a tool whose repeated calls with the same arguments
	// (and the same idempotency key) have no effect beyond the first (MCP
	// idempotentHint): a durable run may call it again when a call's
	// outcome is in doubt.
	Idempotent bool `json:"idempotent,omitempty"`
	// Executes marks a tool that runs commands or code; the default
	// permission policy denies it unless a rule allows it.
	Executes bool `json:"executes,omitempty"`
	// Timeout, when positive, bounds a call of this tool instead of the
	// agent's Config.ToolTimeout (long-running tools, sub-agents).
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Tool is something the model can call.
type Tool interface {
	// Spec describes the tool. It must be cheap and stable between list
	// changes.
	Spec() ToolSpec
	// Call runs the tool. args is a JSON object. A failure the model should
	// see and act on is returned either as a Result with IsError set or as a
	// *failure.Error; any other error is classified by the failure policy.
	// Call must honour ctx: the agent cancels it on timeout and when the run
	// is cancelled.
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}

// Toolset is a group of tools from one source.
//
// A toolset may also have four optional methods, which the agent uses
// when present:
//
//	// Changed is signalled (never closed while the toolset lives) after
//	// the tool list changed at run time (MCP list_changed, a skill folder
//	// edit, a peer's new card). The agent emits an EventToolsChanged; the
//	// next turn sees the new list either way.
//	Changed() <-chan struct{}
//	// Instructions is text for the system prompt (the skills catalog),
//	// included as data about the toolset; it is called once per run.
//	Instructions(ctx context.Context) string
//	// Guard returns the guard of a name that the toolset's tools put
//	// over other tools with Call.GuardTools: when it is called, and when
//	// a run resumes from a checkpoint that keeps the names.
//	Guard(name string) (Guard, bool)
//	// ServerInstructions are the instructions of the servers the
//	// toolset's tools come from (an MCP server's initialize result's),
//	// by server name (the tools' Provenance.Name). They are not put in
//	// the system prompt: the tool search indexes a server's as context
//	// of its tools (see NewToolIndex). The agent calls it when it
//	// builds the search index of a new tool list.
//	ServerInstructions() map[string]string
type Toolset interface {
	// Name identifies the toolset in logs and errors.
	Name() string
	// Tools lists the toolset's current tools. The agent calls it before
	// every model turn, so it must be cheap (cache, and rebuild on change);
	// a toolset whose list changed simply returns the new list, in a new
	// slice: while a toolset returns the slice it returned before, the
	// agent reuses the tool index it built from it.
	Tools(ctx context.Context) ([]Tool, error)
}

// serverInstructor is a toolset with the optional ServerInstructions
// method (see Toolset).
type serverInstructor interface {
	ServerInstructions() map[string]string
}

// changeNotifier is a toolset with the optional Changed method (see
// Toolset).
type changeNotifier interface {
	Changed() <-chan struct{}
}

// Result part types (Part.Type).
const (
	PartText         = "text"
	PartImage        = "image"
	PartAudio        = "audio"
	PartResourceLink = "resource_link"
	PartResource     = "resource"
	PartJSON         = "json"
)

// Part is one piece of a tool result.
type Part struct {
	// Type is PartText, PartImage, PartAudio, PartResourceLink,
	// PartResource or PartJSON.
	Type string `json:"type"`
	// Text for text parts, and the text of a text resource.
	Text string `json:"text,omitempty"`
	// MIMEType of images, audio, blobs and resources.
	MIMEType string `json:"mime_type,omitempty"`
	// Data of images, audio and blob resources.
	Data []byte `json:"data,omitempty"`
	// URI of a resource or resource link.
	URI string `json:"uri,omitempty"`
	// Name of a resource link.
	Name string `json:"name,omitempty"`
	// JSON of a structured part.
	JSON json.RawMessage `json:"json,omitempty"`
}

// Result is what a tool returns.
type Result struct {
	// Parts is the content.
	Parts []Part `json:"parts"`
	// IsError marks a failure the model should see and act on.
	IsError bool `json:"is_error,omitempty"`
	// Source is filled in by the agent from the tool's spec.
	Source Provenance `json:"source"`
	// Handoff, set by a handoff tool (NewHandoffTool), ends the run after
	// this turn with the conversation handed to another agent.
	Handoff *Handoff `json:"handoff,omitempty"`
}

// TextResult returns a result of one text part.
func TextResult(text string) *Result {
	return &Result{Parts: []Part{{Type: PartText, Text: text}}}
}

// ErrorResult returns an error result of one text part that the model sees.
func ErrorResult(format string, args ...any) *Result {
	return &Result{Parts: []Part{{Type: PartText, Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// Text concatenates the result's parts as the model will read them: text as
// is, JSON compact, binary parts as a one-line description.
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for i, p := range r.Parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch p.Type {
		case PartText:
			b.WriteString(p.Text)
		case PartJSON:
			b.Write(p.JSON)
		case PartResource:
			if p.Text != "" {
				fmt.Fprintf(&b, "[resource %s]\n%s", p.URI, p.Text)
			} else {
				fmt.Fprintf(&b, "[resource %s: %s, %d bytes]", p.URI, p.MIMEType, len(p.Data))
			}
		case PartResourceLink:
			fmt.Fprintf(&b, "[resource link %s %s]", p.Name, p.URI)
		default:
			fmt.Fprintf(&b, "[%s: %s, %d bytes]", p.Type, p.MIMEType, len(p.Data))
		}
	}
	return b.String()
}
