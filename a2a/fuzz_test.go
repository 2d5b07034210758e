package a2a

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
)

// cardSeeds are the card fixtures in testdata/.
func cardSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"name":"x","supportedInterfaces":[null]}`))
	f.Add([]byte(`{"name":"x","url":"http://h","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"::","transport":"GRPC"}]}`))
}

func TestParseCardFixtures(t *testing.T) {
	tests := []struct {
		file    string
		ok      bool
		version string
	}{
		{"card-v1.json", true, "1.0"},
		{"card-v03.json", true, "0.3.0"},
		{"card-no-interfaces.json", false, ""},
	}
	for _, tc := range tests {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		card, err := parseCard(b)
		if (err == nil) != tc.ok {
			t.Fatalf("%s: err = %v", tc.file, err)
		}
		if tc.ok && string(card.SupportedInterfaces[0].ProtocolVersion) != tc.version {
			t.Fatalf("%s: interfaces %+v", tc.file, card.SupportedInterfaces[0])
		}
	}
}

func FuzzParseCard(f *testing.F) {
	cardSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		card, err := parseCard(b)
		if err != nil {
			return
		}
		if card.Name == "" || len(card.SupportedInterfaces) == 0 {
			t.Fatalf("accepted an unusable card: %s", b)
		}
	})
}

// FuzzMessageInput fuzzes what the server reads from a client's message:
// the agent's input and the answer to an input-required question.
func FuzzMessageInput(f *testing.F) {
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hello"}]}`))
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"action":"decline"}}]}`))
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":[1,2]},{"text":"x","mediaType":"image/png"}]}`))
	f.Add([]byte(`{"messageId":"m","role":"ROLE_USER","parts":[{"url":"http://x","mediaType":"text/plain"}]}`))
	f.Add([]byte(`{"parts":[null]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m a2ago.Message
		if json.Unmarshal(b, &m) != nil {
			return
		}
		if s, err := inputText(&m); err == nil && s == "" {
			t.Fatal("empty input accepted")
		}
		a, err := parseAnswer(&m)
		if err != nil {
			return
		}
		switch a.Action {
		case agent.ElicitAccept:
			if a.Content == nil {
				t.Fatal("accepted answer without content")
			}
		case agent.ElicitDecline, agent.ElicitCancel:
			if a.Content != nil {
				t.Fatal("refusal with content")
			}
		default:
			t.Fatalf("action %q", a.Action)
		}
	})
}

func TestAnswer(t *testing.T) {
	tests := []struct {
		name   string
		parts  []*a2ago.Part
		action agent.ElicitAction
		key    string
	}{
		{"text", []*a2ago.Part{a2ago.NewTextPart("Paris")}, agent.ElicitAccept, "text"},
		{"data", []*a2ago.Part{a2ago.NewDataPart(map[string]any{"city": "Paris"})}, agent.ElicitAccept, "city"},
		{"decline", []*a2ago.Part{a2ago.NewDataPart(map[string]any{"action": "decline"})}, agent.ElicitDecline, ""},
		{"cancel", []*a2ago.Part{a2ago.NewDataPart(map[string]any{"action": "cancel"})}, agent.ElicitCancel, ""},
	}
	for _, tc := range tests {
		a, err := parseAnswer(a2ago.NewMessage(a2ago.MessageRoleUser, tc.parts...))
		if err != nil || a.Action != tc.action {
			t.Fatalf("%s: %+v %v", tc.name, a, err)
		}
		if tc.key != "" && a.Content[tc.key] == nil {
			t.Fatalf("%s: content %v", tc.name, a.Content)
		}
	}
	if _, err := parseAnswer(a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewFileURLPart("http://x/y.png", "image/png"))); err == nil {
		t.Fatal("file answer accepted")
	}
}
