//go:build !linux

package skills

import (
	"context"
	"errors"
	"os"
	"os/exec"
)

// scriptCommand runs the script by its path, after checking that the path
// still names the file that was opened and checked (there is no portable
// way to execute a descriptor; a swap in the instant between this check
// and the exec is not caught).
func scriptCommand(ctx context.Context, script *os.File, full, rel string, args []string) (*exec.Cmd, error) {
	held, err := script.Stat()
	if err != nil {
		return nil, err
	}
	now, err := os.Lstat(full)
	if err != nil {
		return nil, err
	}
	if !os.SameFile(held, now) {
		return nil, errors.New("the script was replaced since it was checked")
	}
	cmd := exec.CommandContext(ctx, full, args...)
	cmd.Args[0] = rel
	return cmd, nil
}
