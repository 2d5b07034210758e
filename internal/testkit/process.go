package testkit

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartListening starts cmd, a peer that prints "LISTENING <port>" on its
// stdout and exits when its stdin closes, and returns the port. The
// test's cleanup closes the peer's stdin and kills it if it has not
// exited 5 s later. The test fails when the peer exits before it prints
// the port, or has not printed it within 60 s (its stderr is in the
// message).
func StartListening(tb testing.TB, cmd *exec.Cmd) string {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ports := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				select {
				case ports <- p:
				default:
				}
			}
		}
		close(ports)
		_ = cmd.Wait()
	}()
	stop := func() {
		_ = stdin.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	select {
	case p, ok := <-ports:
		if ok {
			tb.Cleanup(stop)
			return p
		}
		<-done
		tb.Fatalf("%s exited before it listened: %s", cmd.Path, stderr.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done // stderr is complete once Wait returned
		tb.Fatalf("%s did not listen within 60 s: %s", cmd.Path, stderr.String())
	}
	return ""
}
