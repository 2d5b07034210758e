// Command relay is the cheapest process that can stand between an MCP
// client and a stdio server: it starts the server (its arguments), copies
// the client's lines to it with the gateway's "mcp__count__" prefix taken
// off tool names, and copies the server's lines back, parsing nothing.
// BenchmarkGatewayCall measures it in the same run as the gateway, as the
// floor of what any process in the middle costs on this machine.
package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(1)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.Exit(1)
	}
	go func() {
		copyLines(in, os.Stdin, []byte(`"mcp__count__`), []byte(`"`))
		_ = in.Close()
	}()
	copyLines(os.Stdout, out, nil, nil)
	_ = cmd.Wait()
}

// copyLines copies r to w line by line, replacing old with new in each.
func copyLines(w io.Writer, r io.Reader, old, new []byte) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if old != nil {
				line = bytes.ReplaceAll(line, old, new)
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
