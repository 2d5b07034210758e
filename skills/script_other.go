//go:build !unix

package skills

import "os/exec"

// ownGroup is a no-op where process groups are not available: the script
// itself is killed when the command's context ends.
func ownGroup(cmd *exec.Cmd) {}

// killGroup is a no-op where process groups are not available.
func killGroup(cmd *exec.Cmd) {}
