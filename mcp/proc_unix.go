//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server in its own process group, so that
// shutdown also reaches the processes it spawned (npx, uvx, shells).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills what is left of the server's process group after
// the server itself was stopped (stdin closed, SIGTERM, SIGKILL by go-sdk).
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
