package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv(envURL) != "" {
		// Started again by run: be a service process.
		if err := serve(context.Background(), os.Getenv(envURL), os.Getenv(envToken), os.Getenv(envName), os.Getenv(envLog)); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestKilledServiceRunFinishes runs the demonstration: service A is
// killed mid-run, service B finishes the run, and the room is booked once.
func TestKilledServiceRunFinishes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, os.Args[0]); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"killing service A", "service B starts", "invitations sent by service-B", "The meeting is set", "bookings made: 1\n", "booked by service-A"} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q:\n%s", want, got)
		}
	}
}
