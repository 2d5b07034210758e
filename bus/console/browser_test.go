package console_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/bus/console"
)

// One headless Chromium serves every browser test of the binary; each test
// gets a tab of its own.
var browser struct {
	once    sync.Once
	ctx     context.Context
	stop    func()
	dataDir string
	err     error
}

// chromiumPath finds Chromium: $CHROMIUM, then the PATH, then Debian's.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

func startBrowser() {
	path := chromiumPath()
	if path == "" {
		browser.err = errors.New("chromium not found (apt-get install chromium, or set $CHROMIUM): `make test` installs it")
		return
	}
	dir, err := os.MkdirTemp("", "console-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	browser.dataDir = dir
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true),
		// A tab in the background must not be throttled: the latency benchmark
		// measures the page, not Chromium's power saving.
		chromedp.Flag("disable-background-timer-throttling", true), chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	// The first run starts the browser, which lives as long as its context:
	// no timeout on it.
	if err := chromedp.Do(bctx); err != nil {
		bcancel()
		acancel()
		browser.err = err
		return
	}
	browser.ctx = bctx
	browser.stop = func() { bcancel(); acancel() }
}

func stopBrowser() {
	if browser.stop != nil {
		browser.stop()
	}
	if browser.dataDir != "" {
		_ = os.RemoveAll(browser.dataDir)
	}
}

// newTab opens a tab of the shared browser, closed with the test; on
// failure the test's last screen is saved as failure.png under its
// artifact directory (go test -artifacts).
func newTab(t testing.TB) context.Context {
	t.Helper()
	browser.once.Do(startBrowser)
	if browser.err != nil {
		t.Skipf("no browser: %v", browser.err)
	}
	tab, cancel := chromedp.NewContext(browser.ctx)
	tctx, tcancel := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(func() {
		if t.Failed() {
			sctx, scancel := context.WithTimeout(tab, 10*time.Second)
			if png, err := chromedp.Run(sctx, chromedp.FullScreenshot(90)); err == nil {
				p := filepath.Join(t.ArtifactDir(), "failure.png")
				if err := os.WriteFile(p, png, 0o644); err == nil {
					t.Logf("screenshot: %s", p)
				}
			}
			scancel()
		}
		tcancel()
		cancel()
	})
	return tctx
}

// screenshot saves the page as name under $CONSOLE_SCREENSHOTS, when set
// (docs/console.md's pictures).
func screenshot(t *testing.T, tab context.Context, name string) {
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Error(err)
	}
}

// TestBrowser drives the console in a real browser: a run started from
// the chat appears on the runs page and completes, a permission ask is
// answered from the page, and a past run is forked.
func TestBrowser(t *testing.T) {
	tab := newTab(t)
	e := newEnv(t, console.Config{Identity: "ada", Models: []string{"scripted"}})
	base := e.srv.URL + "/"

	// The runs page is open; a run started elsewhere appears on it and completes.
	var first struct{ Run string }
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"#/"),
		chromedp.WaitVisible(`#live.on`),
		chromedp.WaitVisible(`#runs-empty`),
	); err != nil {
		t.Fatalf("runs page: %v", err)
	}
	if code := e.do(t, http.MethodPost, "/api/runs", map[string]string{"input": "first from the API"}, &first); code != http.StatusAccepted {
		t.Fatalf("start: %d", code)
	}
	if err := chromedp.Do(tab, chromedp.WaitVisible(`tr[data-run-id="`+first.Run+`"][data-state="done"]`)); err != nil {
		t.Fatalf("the started run on the runs page: %v", err)
	}

	// A run started from the chat: its timeline ends with the answer.
	var answer string
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"#/chat"),
		chromedp.WaitVisible(`#chat-input`),
		chromedp.SendKeys(`#chat-input`, "hello browser"),
		chromedp.Click(`#chat-send`),
		chromedp.WaitVisible(`#timeline li[data-type="final"] pre.answer`),
	); err != nil {
		t.Fatalf("chat run: %v", err)
	}
	answer = text(t, tab, `#timeline li[data-type="final"] pre.answer`)
	if !strings.Contains(answer, "you said hello browser") {
		t.Errorf("answer %q", answer)
	}
	screenshot(t, tab, "console-run.png")

	// A permission ask, answered from the run's page.
	var result string
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"#/chat"),
		chromedp.WaitVisible(`#chat-input`),
		chromedp.SendKeys(`#chat-input`, "please delete it"),
		chromedp.Click(`#chat-send`),
		chromedp.WaitVisible(`#run-questions [data-kind="permission"] button[data-action="accept"]`),
	); err != nil {
		t.Fatalf("permission ask: %v", err)
	}
	screenshot(t, tab, "console-ask.png")
	if err := chromedp.Do(tab,
		chromedp.Click(`#run-questions [data-kind="permission"] button[data-action="accept"]`),
		chromedp.WaitVisible(`#timeline li[data-type="final"] pre.answer`),
		chromedp.WaitVisible(`#run-answers [data-answered]`),
	); err != nil {
		t.Fatalf("answering the ask: %v", err)
	}
	result = text(t, tab, `#timeline li[data-type="tool_finished"] pre`)
	// Opened again, the run's page shows who answered, from the record.
	askRun, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.hash`))
	if err != nil {
		t.Fatal(err)
	}
	var by string
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"#/"),
		chromedp.WaitVisible(`#runs tr`),
		chromedp.Navigate(base+askRun),
		chromedp.WaitVisible(`#run-answers [data-answered]`),
	); err != nil {
		t.Fatalf("the recorded answer: %v", err)
	}
	if by = text(t, tab, `#run-answers [data-answered]`); !strings.Contains(by, "allowed by ada") {
		t.Errorf("recorded answer %q", by)
	}
	if !strings.Contains(result, "deleted tmp/x") {
		t.Errorf("tool result %q", result)
	}

	// A run that calls an agent as a tool: the nested run sits under the call.
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"#/chat"),
		chromedp.WaitVisible(`#chat-input`),
		chromedp.SendKeys(`#chat-input`, "research this"),
		chromedp.Click(`#chat-send`),
		chromedp.WaitVisible(`#timeline li[data-type="final"] pre.answer`),
		chromedp.WaitVisible(`#timeline li[data-call] li[data-type="nested"] li[data-type="final"]`),
	); err != nil {
		t.Fatalf("nested run: %v", err)
	}
	if s := text(t, tab, `#timeline li[data-call] li[data-type="nested"] li[data-type="final"] pre.answer`); s != "found it" {
		t.Errorf("nested answer %q", s)
	}
	screenshot(t, tab, "console-nested.png")

	// Fork the first run from its start with a changed input.
	var forked, head string
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"#/run/"+first.Run),
		chromedp.WaitVisible(`#timeline button[data-fork-turn="0"]`),
		chromedp.Click(`#timeline button[data-fork-turn="0"]`),
		chromedp.WaitVisible(`#fork-input`),
		chromedp.SendKeys(`#fork-input`, "forked input"),
		chromedp.Click(`#fork-go`),
		chromedp.WaitVisible(`#run-head a[href="#/run/`+first.Run+`"]`),
		chromedp.WaitVisible(`#timeline li[data-type="final"] pre.answer`),
	); err != nil {
		t.Fatalf("fork: %v", err)
	}
	forked, head = text(t, tab, `#timeline li[data-type="final"] pre.answer`), text(t, tab, `#run-head`)
	if !strings.Contains(forked, "you said forked input") || !strings.Contains(head, "fork of "+first.Run) {
		t.Errorf("fork answer %q, head %q", forked, head)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(base+"#/"), chromedp.WaitVisible(`#runs tr:nth-child(5)`)); err != nil {
		t.Fatalf("runs page: %v", err)
	}
	screenshot(t, tab, "console-runs.png")
}

// text is the visible text of the first element sel matches.
func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(tab, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}
