// Package evalset is the tool search's evaluation set: the corpus of MCP
// servers' tools/list answers and the tasks written as users would ask
// (agent/testdata/toolsearch, docs/context.md#ranking), its dev and
// held-out halves, and its scores. The tests that measure a ranking share
// it; nothing else imports it.
//
//	set, err := evalset.Load("testdata/toolsearch")
//	for _, half := range set.Halves() {
//		fmt.Println(half.Name, evalset.Score(half.Tasks, search))
//	}
package evalset

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Server is one server of the corpus: its tools/list answer and its
// initialize result's instructions.
type Server struct {
	Name         string
	Instructions string `json:"instructions"`
	Tools        []Tool `json:"tools"`
}

// Tool is one tool of a server's tools/list answer.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Task is one task: what a user asks, and the tool right for it
// (server/tool).
type Task struct {
	Task string `json:"task"`
	Want string `json:"want"`
	// Also are tools as right as Want, where the task leaves the choice
	// open (two servers offering the same function, the task naming
	// neither).
	Also []string `json:"also,omitempty"`
}

// Wants are the agent's names (mcp__server__tool) of the tools right for
// t.
func (t Task) Wants() []string {
	var out []string
	for _, w := range append([]string{t.Want}, t.Also...) {
		server, tool, _ := strings.Cut(w, "/")
		out = append(out, ToolName(server, tool))
	}
	return out
}

// ToolName is the agent's name of a server's tool.
func ToolName(server, tool string) string { return "mcp__" + server + "__" + tool }

// Set is the corpus, its servers sorted by name, and the tasks in file
// order: Tasks (tasks.json), whose odd positions are the held-out half,
// and DevOnly (tasks-dev.json), tasks written later to choose constants
// on, which are all dev.
type Set struct {
	Servers []Server
	Tasks   []Task
	DevOnly []Task
}

// Load reads servers.json, tasks.json and tasks-dev.json of dir, and
// checks that every task's tools are in the corpus.
func Load(dir string) (*Set, error) {
	b, err := os.ReadFile(filepath.Join(dir, "servers.json"))
	if err != nil {
		return nil, err
	}
	var servers map[string]Server
	if err := json.Unmarshal(b, &servers); err != nil {
		return nil, fmt.Errorf("servers.json: %w", err)
	}
	set := &Set{}
	names := map[string]bool{}
	for name, s := range servers {
		s.Name = name
		set.Servers = append(set.Servers, s)
		for _, t := range s.Tools {
			names[ToolName(name, t.Name)] = true
		}
	}
	slices.SortFunc(set.Servers, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	if b, err = os.ReadFile(filepath.Join(dir, "tasks.json")); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &set.Tasks); err != nil {
		return nil, fmt.Errorf("tasks.json: %w", err)
	}
	if len(set.Tasks) == 0 {
		return nil, fmt.Errorf("tasks.json holds no task")
	}
	if b, err = os.ReadFile(filepath.Join(dir, "tasks-dev.json")); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &set.DevOnly); err != nil {
		return nil, fmt.Errorf("tasks-dev.json: %w", err)
	}
	for _, t := range append(slices.Clip(set.Tasks), set.DevOnly...) {
		for _, w := range t.Wants() {
			if !names[w] {
				return nil, fmt.Errorf("task %q wants %s, which is not in the corpus", t.Task, w)
			}
		}
	}
	return set, nil
}

// Half is a named set of tasks.
type Half struct {
	Name  string
	Tasks []Task
}

// Halves are dev (the tasks at even positions and the dev-only tasks:
// those to look at and choose constants on), held-out (odd positions:
// only measured) and all.
func (s *Set) Halves() []Half {
	var dev, held []Task
	for i, t := range s.Tasks {
		if i%2 == 0 {
			dev = append(dev, t)
		} else {
			held = append(held, t)
		}
	}
	dev = append(dev, s.DevOnly...)
	return []Half{{"dev", dev}, {"held-out", held}, {"all", append(slices.Clip(s.Tasks), s.DevOnly...)}}
}

// Scores are a ranking's recall@1, recall@5 and mean reciprocal rank (of
// the first right tool in its top 20; 0 beyond).
type Scores struct{ R1, R5, MRR float64 }

func (s Scores) String() string {
	return fmt.Sprintf("recall@1 %.3f recall@5 %.3f MRR %.3f", s.R1, s.R5, s.MRR)
}

// Rank is the position (from 0) of the first of t's right tools in
// ranked (tool names, best first), or -1.
func Rank(t Task, ranked []string) int {
	wants := t.Wants()
	return slices.IndexFunc(ranked, func(name string) bool { return slices.Contains(wants, name) })
}

// Score scores search (the names of the tools it ranks for a query, best
// first; only the first 20 count) on tasks.
func Score(tasks []Task, search func(query string) []string) Scores {
	var s Scores
	for _, t := range tasks {
		ranked := search(t.Task)
		r := Rank(t, ranked[:min(len(ranked), 20)])
		if r < 0 {
			continue
		}
		if r == 0 {
			s.R1++
		}
		if r < 5 {
			s.R5++
		}
		s.MRR += 1 / float64(r+1)
	}
	n := float64(len(tasks))
	return Scores{s.R1 / n, s.R5 / n, s.MRR / n}
}
