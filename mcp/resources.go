package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// do runs op against a server's session through the failure policy.
func (m *Manager) do(ctx context.Context, serverName, op string, f func(ctx context.Context, sess *gomcp.ClientSession) error) error {
	s, err := m.server(serverName)
	if err != nil {
		return err
	}
	return m.pol().Execute(ctx, s.key, func(ctx context.Context) error {
		sess, err := s.session(ctx, 0)
		if err != nil {
			return err
		}
		if err := f(ctx, sess); err != nil {
			e := s.callErr(ctx, sess, err, "", nil)
			var fe *failure.Error
			if ok := asFailure(e, &fe); ok {
				fe.Op = op
			}
			return e
		}
		return nil
	})
}

func asFailure(err error, fe **failure.Error) bool {
	e, ok := err.(*failure.Error)
	if ok {
		*fe = e
	}
	return ok
}

// Resources lists a server's resources, following pagination.
func (m *Manager) Resources(ctx context.Context, serverName string) iter.Seq2[*gomcp.Resource, error] {
	return paged(ctx, m, serverName, "list resources", func(ctx context.Context, sess *gomcp.ClientSession) iter.Seq2[*gomcp.Resource, error] {
		return sess.Resources(ctx, nil)
	})
}

// ResourceTemplates lists a server's resource templates, following
// pagination.
func (m *Manager) ResourceTemplates(ctx context.Context, serverName string) iter.Seq2[*gomcp.ResourceTemplate, error] {
	return paged(ctx, m, serverName, "list resource templates", func(ctx context.Context, sess *gomcp.ClientSession) iter.Seq2[*gomcp.ResourceTemplate, error] {
		return sess.ResourceTemplates(ctx, nil)
	})
}

// Prompts lists a server's prompts, following pagination.
func (m *Manager) Prompts(ctx context.Context, serverName string) iter.Seq2[*gomcp.Prompt, error] {
	return paged(ctx, m, serverName, "list prompts", func(ctx context.Context, sess *gomcp.ClientSession) iter.Seq2[*gomcp.Prompt, error] {
		return sess.Prompts(ctx, nil)
	})
}

func paged[T any](ctx context.Context, m *Manager, serverName, op string, list func(context.Context, *gomcp.ClientSession) iter.Seq2[*T, error]) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		s, err := m.server(serverName)
		if err != nil {
			yield(nil, err)
			return
		}
		sess, err := s.session(ctx, 0)
		if err != nil {
			yield(nil, err)
			return
		}
		for v, err := range list(ctx, sess) {
			if err != nil {
				e := s.callErr(ctx, sess, err, "", nil)
				var fe *failure.Error
				if asFailure(e, &fe) {
					fe.Op = op
				}
				yield(nil, e)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// ReadResource reads a resource (text or blob) as result parts, ready to
// attach to a conversation as context.
func (m *Manager) ReadResource(ctx context.Context, serverName, uri string) ([]agent.Part, error) {
	var parts []agent.Part
	err := m.do(ctx, serverName, "read resource", func(ctx context.Context, sess *gomcp.ClientSession) error {
		res, err := sess.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
		if err != nil {
			return err
		}
		parts = parts[:0]
		for _, c := range res.Contents {
			if c != nil {
				parts = append(parts, resourcePart(c))
			}
		}
		return nil
	})
	return parts, err
}

// Subscribe asks the server for resources/updated notifications of uri;
// they reach Config.OnResourceUpdated.
func (m *Manager) Subscribe(ctx context.Context, serverName, uri string) error {
	return m.do(ctx, serverName, "subscribe", func(ctx context.Context, sess *gomcp.ClientSession) error {
		return sess.Subscribe(ctx, &gomcp.SubscribeParams{URI: uri})
	})
}

// Unsubscribe stops the notifications of uri.
func (m *Manager) Unsubscribe(ctx context.Context, serverName, uri string) error {
	return m.do(ctx, serverName, "unsubscribe", func(ctx context.Context, sess *gomcp.ClientSession) error {
		return sess.Unsubscribe(ctx, &gomcp.UnsubscribeParams{URI: uri})
	})
}

// RenderedPrompt is a prompt rendered with arguments (Manager.GetPrompt).
type RenderedPrompt struct {
	// Description is the prompt's, as the server gave it.
	Description string
	// Messages are the prompt's messages; non-text content is described in
	// text (Parts keeps it whole).
	Messages []llm.Message
	// Parts holds each message's content as a result part.
	Parts []agent.Part
}

// GetPrompt renders a server's prompt with arguments into messages.
func (m *Manager) GetPrompt(ctx context.Context, serverName, name string, args map[string]string) (*RenderedPrompt, error) {
	var out *RenderedPrompt
	err := m.do(ctx, serverName, "get prompt", func(ctx context.Context, sess *gomcp.ClientSession) error {
		res, err := sess.GetPrompt(ctx, &gomcp.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		out = &RenderedPrompt{Description: res.Description}
		for _, pm := range res.Messages {
			if pm == nil {
				continue
			}
			part := convertOne(pm.Content)
			role := llm.RoleUser
			if pm.Role == "assistant" {
				role = llm.RoleAssistant
			}
			out.Parts = append(out.Parts, part)
			out.Messages = append(out.Messages, llm.Message{Role: role, Text: (&agent.Result{Parts: []agent.Part{part}}).Text()})
		}
		return nil
	})
	return out, err
}

// Complete asks a server to complete a prompt or resource template argument.
// ref is "prompt:<name>" or "resource:<uri template>".
func (m *Manager) Complete(ctx context.Context, serverName, ref, argName, value string, argContext map[string]string) ([]string, error) {
	kind, name, ok := strings.Cut(ref, ":")
	if !ok || (kind != "prompt" && kind != "resource") {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceMCP, Name: serverName,
			Message: fmt.Sprintf("completion reference %q must be prompt:<name> or resource:<uri template>", ref)}
	}
	r := &gomcp.CompleteReference{Type: "ref/" + kind}
	if kind == "prompt" {
		r.Name = name
	} else {
		r.URI = name
	}
	var vals []string
	err := m.do(ctx, serverName, "complete", func(ctx2 context.Context, sess *gomcp.ClientSession) error {
		p := &gomcp.CompleteParams{Ref: r, Argument: gomcp.CompleteParamsArgument{Name: argName, Value: value}}
		if len(argContext) > 0 {
			p.Context = &gomcp.CompleteContext{Arguments: argContext}
		}
		res, err := sess.Complete(ctx2, p)
		if err != nil {
			return err
		}
		vals = res.Completion.Values
		return nil
	})
	return vals, err
}

func (m *Manager) listResourcesTool(src agent.Provenance) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: nameListResources, ReadOnly: true, Source: src,
		Description: "List the resources and resource templates MCP servers offer (servers: " + strings.Join(m.ServerNames(), ", ") + "). Give server to list one.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string"}}}`)},
		func(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
			var a struct {
				Server string `json:"server"`
			}
			_ = json.Unmarshal(raw, &a)
			var b strings.Builder
			for _, s := range m.servers {
				s.mu.Lock()
				has := s.hasRes
				s.mu.Unlock()
				if !has || a.Server != "" && a.Server != s.cfg.Name {
					continue
				}
				fmt.Fprintf(&b, "server %s:\n", s.cfg.Name)
				n := 0
				for r, err := range m.Resources(ctx, s.cfg.Name) {
					if err != nil {
						fmt.Fprintf(&b, "  (listing failed: %s)\n", failure.From(err).ModelText())
						break
					}
					if n++; n > 200 {
						b.WriteString("  (more resources not shown)\n")
						break
					}
					fmt.Fprintf(&b, "  %s  %s  %s\n", r.URI, r.Name, r.MIMEType)
				}
				for t, err := range m.ResourceTemplates(ctx, s.cfg.Name) {
					if err != nil {
						break
					}
					fmt.Fprintf(&b, "  template %s  %s\n", t.URITemplate, t.Name)
				}
			}
			if b.Len() == 0 {
				return agent.ErrorResult("no server named %q offers resources", a.Server), nil
			}
			return agent.TextResult(b.String()), nil
		})
}

func (m *Manager) readResourceTool(src agent.Provenance) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: nameReadResource, ReadOnly: true, Source: src,
		Description: "Read a resource from an MCP server by its URI.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string"},"uri":{"type":"string"}},"required":["server","uri"]}`)},
		func(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
			var a struct{ Server, URI string }
			if err := json.Unmarshal(raw, &a); err != nil {
				return agent.ErrorResult("invalid arguments: %v", err), nil
			}
			parts, err := m.ReadResource(ctx, a.Server, a.URI)
			if err != nil {
				return nil, err
			}
			return m.fitResult(ctx, nameReadResource, &agent.Result{Parts: parts})
		})
}

func (m *Manager) getPromptTool(src agent.Provenance) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: nameGetPrompt, ReadOnly: true, Source: src,
		Description: "Render a prompt an MCP server offers, with its arguments.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string"},"name":{"type":"string"},"arguments":{"type":"object","additionalProperties":{"type":"string"}}},"required":["server","name"]}`)},
		func(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
			var a struct {
				Server, Name string
				Arguments    map[string]string
			}
			if err := json.Unmarshal(raw, &a); err != nil {
				return agent.ErrorResult("invalid arguments: %v", err), nil
			}
			p, err := m.GetPrompt(ctx, a.Server, a.Name, a.Arguments)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			if p.Description != "" {
				b.WriteString(p.Description + "\n")
			}
			for _, msg := range p.Messages {
				fmt.Fprintf(&b, "[%s] %s\n", msg.Role, msg.Text)
			}
			return agent.TextResult(b.String()), nil
		})
}
