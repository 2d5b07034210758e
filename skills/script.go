package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// safeEnv are the variables a script inherits; everything else (API keys,
// tokens) is scrubbed.
var safeEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}

const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// scriptEnv builds a script's environment: the safe variables of the
// process, SKILL_DIR, and the configured extras.
func scriptEnv(dir string, extra map[string]string) []string {
	vars := map[string]string{}
	for _, k := range safeEnv {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	if vars["PATH"] == "" {
		vars["PATH"] = defaultPath
	}
	vars["SKILL_DIR"] = dir
	for k, v := range extra {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// capWriter keeps the first max bytes written and counts the rest.
type capWriter struct {
	max     int
	buf     []byte
	dropped int64
}

// Write keeps what fits and counts the rest; it never fails.
func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - len(w.buf)
	if room > 0 {
		n := min(room, len(p))
		w.buf = append(w.buf, p[:n]...)
		w.dropped += int64(len(p) - n)
	} else {
		w.dropped += int64(len(p))
	}
	return len(p), nil
}

// String returns the kept output and a note of what was cut.
func (w *capWriter) String() string {
	s := strings.ToValidUTF8(string(w.buf), "\uFFFD")
	if w.dropped > 0 {
		s += fmt.Sprintf("\n[output cut: %d more bytes not shown]", w.dropped)
	}
	return s
}

// scriptResult is the outcome of a script run.
type scriptResult struct {
	// ExitCode is the script's exit status.
	ExitCode int
	// Stdout and Stderr are the script's output, each capped at
	// Config.ScriptOutputBytes with a note of what was cut.
	Stdout string
	Stderr string
}

func (t *Toolset) callRunScript(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
	tool := t.cfg.ToolPrefix + ToolRunScript
	var args struct {
		Skill string   `json:"skill"`
		Path  string   `json:"path"`
		Args  []string `json:"args"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, badArgs(tool, "", "pass {\"skill\": \"...\", \"path\": \"...\", \"args\": [...]}")
	}
	res, err := t.runScript(ctx, args.Skill, args.Path, args.Args)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("exit status: %d\n--- stdout ---\n%s\n--- stderr ---\n%s", res.ExitCode, res.Stdout, res.Stderr)
	r := agent.TextResult(text)
	r.IsError = res.ExitCode != 0
	return r, nil
}

// runScript runs a script bundled with a skill, if Config.Scripts is set
// and the person asked through the agent's Elicitor accepts. The file must
// be inside the skill's folder (no "..", no absolute path, no symbolic link
// out of it) and executable; it is executed directly, without a shell, in
// the skill's folder, with a scrubbed environment, in its own process group
// that is killed on timeout or cancellation. A decline is a failure.Declined
// error; a timeout a failure.Timeout error.
func (t *Toolset) runScript(ctx context.Context, skill, rel string, args []string) (*scriptResult, error) {
	tool := t.cfg.ToolPrefix + ToolRunScript
	fail := func(kind failure.Kind, msg string, err error) error {
		return &failure.Error{Kind: kind, Source: failure.SourceSkill, Name: skill, Tool: tool, Message: msg, Err: err}
	}
	if !t.cfg.Scripts {
		return nil, fail(failure.PermissionDenied, "running skill scripts is disabled", nil)
	}
	s, ok := t.Skill(skill)
	if !ok {
		return nil, badArgs(tool, skill, fmt.Sprintf("there is no skill named %q; use a name from <available_skills>", skill))
	}
	if t.cfg.Roots[s.rootIdx].Path == "" {
		return nil, fail(failure.ToolError, fmt.Sprintf("skill %q is embedded in the program; its scripts cannot be run", skill), nil)
	}
	p, err := cleanRel(rel)
	if err != nil {
		return nil, fail(failure.InvalidArgs, fmt.Sprintf("%q cannot be run: %v", rel, err), err)
	}
	d, err := t.openSkill(s)
	if err != nil {
		return nil, fail(failure.ToolError, "the skill's folder cannot be opened", err)
	}
	defer d.close()
	// The script is opened now and run by this handle after the question:
	// swapping the file (for a link out of the folder, say) while the
	// person is being asked changes nothing.
	sf, st, err := d.openFile(p, true)
	if err != nil {
		return nil, t.openError(tool, skill, rel, st, err)
	}
	script := sf.(*os.File)
	defer script.Close()
	if st.Mode().Perm()&0o111 == 0 {
		return nil, fail(failure.InvalidArgs, fmt.Sprintf("%q is not an executable file (scripts run directly, without a shell: it needs a #! line and the executable bit)", rel), nil)
	}
	if args == nil {
		args = []string{}
	}
	argsJSON, _ := json.Marshal(map[string]any{"skill": skill, "path": p, "args": args})
	call, _ := agent.CallFromContext(ctx)
	ans, err := call.Elicit(ctx, agent.Elicitation{
		Kind:    agent.ElicitPermission,
		Source:  agent.Provenance{Kind: failure.SourceSkill, Name: skill, Tool: ToolRunScript},
		Tool:    tool,
		Args:    argsJSON,
		Message: fmt.Sprintf("Skill %q wants to run its script %s with arguments %q in %s. Allow it?", skill, p, args, s.Dir),
	})
	if err != nil {
		return nil, fail(failure.PermissionDenied, "approval to run the script could not be obtained", err)
	}
	if ans.Action != agent.ElicitAccept {
		msg := fmt.Sprintf("the user declined to run %s", p)
		if ans.Reason != "" {
			msg += " (" + ans.Reason + ")"
		}
		return nil, fail(failure.Declined, msg, nil)
	}

	rctx, cancel := context.WithTimeout(ctx, t.cfg.ScriptTimeout)
	defer cancel()
	dir := s.realDir
	if dir == "" {
		dir = s.Dir
	}
	cmd, err := scriptCommand(rctx, script, filepath.Join(dir, filepath.FromSlash(p)), p, args)
	if err != nil {
		return nil, fail(failure.InvalidArgs, fmt.Sprintf("%q cannot be run: %v", rel, err), fmt.Errorf("%w: %w", errOutside, err))
	}
	cmd.Dir = dir
	cmd.Env = scriptEnv(s.Dir, t.cfg.ScriptEnv)
	stdout := &capWriter{max: t.cfg.ScriptOutputBytes}
	stderr := &capWriter{max: t.cfg.ScriptOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	t.log.Info().Str("skill", skill).Str("script", p).Strs("args", args).Msg("running skill script")
	err = cmd.Run()
	killGroup(cmd)
	res := &scriptResult{Stdout: stdout.String(), Stderr: stderr.String()}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return nil, fail(failure.KindOf(ctx.Err()), fmt.Sprintf("%s was stopped: the call was cancelled", p), context.Cause(ctx))
	case rctx.Err() != nil:
		return nil, fail(failure.Timeout, fmt.Sprintf("%s did not finish within %s and was killed", p, t.cfg.ScriptTimeout), rctx.Err())
	case err != nil && cmd.ProcessState == nil:
		return nil, fail(failure.ToolError, fmt.Sprintf("%s could not be started", p), err)
	}
	return res, nil
}
