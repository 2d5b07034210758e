package agui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/agent/agui"
)

// An interrupt nobody answers within AnswerTimeout cancels its run: a
// later resume naming it answers nothing (the input then needs a user
// message of its own).
func TestUnansweredInterruptTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := agui.New(context.Background(), agui.Config{Runner: newNoteAgent(t), AnswerTimeout: time.Minute})
		defer h.Close()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(
			`{"threadId":"t","runId":"r1","messages":[{"id":"m","role":"user","content":"note milk"}]}`)))
		body := rec.Body.String()
		i := strings.LastIndex(body, "data: ")
		var last struct {
			Outcome struct {
				Interrupts []struct{ ID string } `json:"interrupts"`
			} `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(body[i+len("data: "):])), &last); err != nil || len(last.Outcome.Interrupts) != 1 {
			t.Fatalf("no interrupt in %s (%v)", body, err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(
			`{"threadId":"t","runId":"r2","messages":[],"resume":[{"interruptId":"`+last.Outcome.Interrupts[0].ID+`","status":"resolved","payload":true}]}`)))
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("resume after the timeout: %d %s", rec.Code, rec.Body.String())
		}
	})
}
