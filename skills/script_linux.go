//go:build linux

package skills

import (
	"context"
	"os"
	"os/exec"
)

// scriptCommand runs the opened script by its descriptor: the file is
// passed to the child as descriptor 3 and executed as /proc/self/fd/3
// (the interpreter of a #! script opens that path, which is why the
// descriptor is inherited), so what runs is the file that was checked,
// whatever happened to its path since. argv[0] is the script's relative
// path.
func scriptCommand(ctx context.Context, script *os.File, _ string, rel string, args []string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, "/proc/self/fd/3", args...)
	cmd.Args[0] = rel
	cmd.ExtraFiles = []*os.File{script}
	return cmd, nil
}
