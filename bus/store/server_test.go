package store_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// envNATSDir makes the test binary a NATS server process with JetStream
// in that directory (natsServerProcess).
const envNATSDir = "SWITCHBOARD_NATS_DIR"

// natsProcess serves NATS on a loopback port until its stdin closes; it
// prints "LISTENING <client URL>" first.
func natsProcess() int {
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: os.Getenv(envNATSDir)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats:", err)
		return 1
	}
	fmt.Println("LISTENING " + b.ClientURL())
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
	return testkit.StartListening(tb, cmd)
}
