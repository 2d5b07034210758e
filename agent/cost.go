package agent

import (
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// checkPrices validates the price table and the cost budget at New: a
// cost limit needs a price for the configured model, or it could never be
// enforced.
func checkPrices(cfg *Config) error {
	if cfg.Prices == nil {
		cfg.Prices = llm.DefaultPrices()
	}
	if err := cfg.Prices.Validate(); err != nil {
		return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Op: "agent.Config.Prices", Err: err}
	}
	if cfg.Budget.MaxCost > 0 {
		if _, ok := cfg.Prices.Lookup(cfg.Model.Name()); !ok {
			return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Name: cfg.Model.Name(),
				Message: fmt.Sprintf("agent.Config.Budget.MaxCost is %s but model %q has no price in agent.Config.Prices, so the limit could not be enforced: "+
					"give the model a price (llm.DefaultPrices().With(llm.Prices{...})) or drop the cost limit", cfg.Budget.MaxCost, cfg.Model.Name())}
		}
	}
	return nil
}

// turnCost is what a model turn cost: the price of the model that
// answered (Response.Model, under the provider of the configured model's
// name), else of the configured model; unknown when neither has a price or
// the provider reported no usage.
func (a *Agent) turnCost(resp *llm.Response) llm.Cost {
	return a.costAs(a.cfg.Model.Name(), resp)
}

// costAs is what a model's answer cost, the model named name ("" when
// unknown: priced only by the answer's Response.Model).
func (a *Agent) costAs(name string, resp *llm.Response) llm.Cost {
	if resp.Usage == (llm.Usage{}) {
		return llm.Cost{Unpriced: 1}
	}
	if m := resp.Model; m != "" {
		if prov, _, ok := strings.Cut(name, "/"); ok && !strings.Contains(m, "/") {
			m = prov + "/" + m
		}
		if p, ok := a.cfg.Prices.Lookup(m); ok {
			return llm.Cost{USD: p.Cost(resp.Usage)}
		}
	}
	if name == "" {
		return llm.Cost{Unpriced: 1}
	}
	if p, ok := a.cfg.Prices.Lookup(name); ok {
		return llm.Cost{USD: p.Cost(resp.Usage)}
	}
	return llm.Cost{Unpriced: 1}
}

// account adds a model turn's usage and cost to the run's totals and
// returns the turn's cost.
func (r *run) account(resp *llm.Response) llm.Cost {
	return r.accountAs(r.a.cfg.Model.Name(), resp)
}

// accountAs is account for an answer of the model named name ("": the
// one the answer names).
func (r *run) accountAs(name string, resp *llm.Response) llm.Cost {
	c := r.a.costAs(name, resp)
	r.ans.Usage = r.ans.Usage.Add(resp.Usage)
	r.ans.Cost = r.ans.Cost.Add(c)
	return c
}

// summaryModel names the model of compaction summaries: the agent's, or
// "" with a Summarizer (whose answer names its model).
func (cx *ctxRun) summaryModel() string {
	if cx.r.a.cfg.Context.Summarizer != nil {
		return ""
	}
	return cx.r.a.cfg.Model.Name()
}

// overBudget is the failure of a run past its token or cost limit (nil
// while within both). A cost limit the run cannot check (a turn whose
// provider reported no usage) stops the run too: a limit that is not
// enforced is not one.
func (r *run) overBudget() error {
	b := r.a.cfg.Budget
	if b.MaxRunTokens > 0 && r.ans.Usage.Total() > b.MaxRunTokens {
		return &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent,
			Message: fmt.Sprintf("the run's budget of %d tokens is exhausted (%d used)", b.MaxRunTokens, r.ans.Usage.Total())}
	}
	if b.MaxCost <= 0 {
		return nil
	}
	if c := r.ans.Cost; !c.Known() {
		return &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent, Name: r.a.cfg.Model.Name(),
			Message: fmt.Sprintf("the run's cost budget of %s cannot be enforced: %d model turns have no cost (the provider reported no usage)", b.MaxCost, c.Unpriced)}
	}
	if r.ans.Cost.USD > b.MaxCost {
		return &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent,
			Message: fmt.Sprintf("the run's cost budget of %s is exhausted (%s spent)", b.MaxCost, r.ans.Cost.USD)}
	}
	return nil
}

// reasoned emits the model's reasoning of a turn as its own event (never
// as the answer's text).
func (r *run) reasoned(turn int, reasoning string) {
	if reasoning != "" {
		r.emit(Event{Type: EventModelReasoning, Turn: turn, Text: reasoning})
	}
}
