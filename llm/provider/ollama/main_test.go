package ollama

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func TestMain(m *testing.M) {
	failure.SetDefault(providertest.Once)
	goleak.VerifyTestMain(m)
}
