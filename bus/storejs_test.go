package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/storetest"
)

// TestStoreConformance runs the agent.Store suite on the JetStream store
// (an embedded server with file storage; each test its own buckets).
func TestStoreConformance(t *testing.T) {
	b := newBus(t, bus.Config{})
	n := 0
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) agent.Store {
			n++
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := bus.OpenStore(ctx, b, bus.StoreConfig{Name: "conf" + string(rune('a'+n))})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		TTLStep: time.Second,
	})
}
