package console

import (
	"encoding/json"
	"sync"
)

// topicRuns is the topic of the runs list and the inbox: runs started and
// ended, questions asked and answered.
const topicRuns = "runs"

// liveMsg is one message of the live stream (/api/live).
type liveMsg struct {
	// Kind is run (a new run), state (a run's state changed), question (a
	// question waits), answered (a question was answered or went away).
	Kind     string        `json:"kind"`
	Run      *RunSummary   `json:"run,omitempty"`
	Question *QuestionView `json:"question,omitempty"`
	Answer   *AnswerRecord `json:"answer,omitempty"`
}

// subscriberBuffer bounds what one live page may fall behind by: a page
// that falls further is disconnected (its EventSource reconnects and
// reloads).
const subscriberBuffer = 256

// hub fans live messages out to the pages that listen, each through a
// bounded buffer: a slow page never holds the others back.
type hub struct {
	mu     sync.Mutex
	subs   map[string]map[chan []byte]struct{}
	closed bool
}

func newHub() *hub { return &hub{subs: map[string]map[chan []byte]struct{}{}} }

// subscribe returns a channel of the topic's messages (closed when the
// page fell behind or the hub closed) and the function that ends it.
func (h *hub) subscribe(topic string) (<-chan []byte, func()) {
	ch := make(chan []byte, subscriberBuffer)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch, func() {}
	}
	if h.subs[topic] == nil {
		h.subs[topic] = map[chan []byte]struct{}{}
	}
	h.subs[topic][ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[topic][ch]; ok {
			delete(h.subs[topic], ch)
			close(ch)
		}
	}
}

func (h *hub) has(topic string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[topic]) > 0
}

func (h *hub) publish(topic string, m liveMsg) {
	if !h.has(topic) {
		return
	}
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	data = redactJSON(data)
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[topic] {
		select {
		case ch <- data:
		default: // fell behind: disconnect it
			delete(h.subs[topic], ch)
			close(ch)
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, subs := range h.subs {
		for ch := range subs {
			close(ch)
		}
	}
	h.subs = map[string]map[chan []byte]struct{}{}
}
