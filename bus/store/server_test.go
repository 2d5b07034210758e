package store_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
)

// envNATSDir makes the test binary a NATS server process with JetStream
// in that directory (natsServerProcess).
const envNATSDir = "SWITCHBOARD_NATS_DIR"

// natsProcess serves NATS on a loopback port until its stdin closes; it
// prints its client URL first.
func natsProcess() int {
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: os.Getenv(envNATSDir)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats:", err)
		return 1
	}
	fmt.Println(b.ClientURL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = b.Close()
	return 0
}

// natsServerProcess starts a NATS server in a process of its own (the
// test binary re-executed), so that this process's memory is the
// client's alone; it stops with the test.
func natsServerProcess(tb testing.TB) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envNATSDir+"="+tb.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	tb.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	url := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			url <- strings.TrimSpace(sc.Text())
		}
		close(url)
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
	}()
	select {
	case u, ok := <-url:
		if !ok || u == "" {
			tb.Fatal("the NATS server process did not start")
		}
		return u
	case <-time.After(30 * time.Second):
		tb.Fatal("the NATS server process did not start in 30s")
	}
	return ""
}
