package guard

import (
	"fmt"
	"strconv"

	"github.com/switchboard-dev/switchboard/failure"
)

// configErr is a configuration failure of a guard.
func configErr(format string, args ...any) error {
	return &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Message: fmt.Sprintf(format, args...)}
}

func quote(s string) string { return strconv.Quote(s) }
