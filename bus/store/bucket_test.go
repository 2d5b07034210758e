package store

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// openTestKV opens a bus on dir (file storage; the same dir after a Close
// is the server restarted) and a durable bucket on it whose values over
// inline bytes go to the object store.
func openTestKV(t *testing.T, dir string, inline int, maxAge time.Duration) (*bus.Bus, *durableKV) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := bus.New(ctx, bus.Config{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := openBlobStore(ctx, connOf(b, nil, nil), "T_BLOBS", maxAge, 1, inline)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	d, err := openDurableKV(ctx, connOf(b, nil, nil), "T_REC", "test records", maxAge, 1, 0, blobs)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	return b, d
}

func objectCount(t *testing.T, d *durableKV) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := d.blobs.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

// TestDurableKVRoundTripAcrossRestart: small and large values are written
// with revision checks, read back, replaced (the replaced object is
// deleted) and read again after the server restarts on the same directory.
func TestDurableKVRoundTripAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	b, d := openTestKV(t, dir, 64, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	big := []byte(`{"text":"` + strings.Repeat("x", 5000) + `"}`)
	small := []byte(`{"text":"hi"}`)
	revs := map[string]uint64{}
	for _, tc := range []struct {
		key   string
		value []byte
	}{{"small", small}, {"big", big}} {
		rev, err := d.put(ctx, tc.key, tc.value, 0, 0)
		if err != nil {
			t.Fatalf("create %s: %v", tc.key, err)
		}
		if _, err := d.put(ctx, tc.key, tc.value, 0, 0); !errors.Is(err, failure.Conflict) {
			t.Errorf("second create of %s: %v, want Conflict", tc.key, err)
		}
		if _, err := d.put(ctx, tc.key, tc.value, rev+100, 0); !errors.Is(err, failure.Conflict) {
			t.Errorf("update of %s at a wrong revision: %v, want Conflict", tc.key, err)
		}
		got, grev, err := d.get(ctx, tc.key)
		if err != nil || grev != rev || !bytes.Equal(got, tc.value) {
			t.Errorf("get %s = %d bytes rev %d, %v; want %d bytes rev %d", tc.key, len(got), grev, err, len(tc.value), rev)
		}
		revs[tc.key] = rev
	}
	if n := objectCount(t, d); n != 1 {
		t.Errorf("%d objects after one large value (and two refused writes), want 1", n)
	}
	// Replace the large value by others: the object replaced two writes
	// ago goes (the one just replaced stays for readers of its pointer).
	var big2 []byte
	for i, c := range []string{"y", "z", "w"} {
		big2 = bytes.ReplaceAll(big, []byte("x"), []byte(c))
		rev, err := d.put(ctx, "big", big2, revs["big"], 0)
		if err != nil {
			t.Fatal(err)
		}
		revs["big"] = rev
		if n := objectCount(t, d); n != 2 {
			t.Errorf("%d objects after replacing the large value %d times, want 2", n, i+1)
		}
	}
	if _, _, err := d.get(ctx, "missing"); !errors.Is(err, failure.NotFound) {
		t.Errorf("get missing: %v, want NotFound", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b, d = openTestKV(t, dir, 64, 0)
	defer b.Close()
	for key, want := range map[string][]byte{"small": small, "big": big2} {
		got, grev, err := d.get(ctx, key)
		if err != nil || grev != revs[key] || !bytes.Equal(got, want) {
			t.Errorf("after restart, get %s = %d bytes rev %d, %v", key, len(got), grev, err)
		}
	}
	keys, err := d.keys(ctx, ">")
	if err != nil || len(keys) != 2 {
		t.Errorf("keys = %v, %v", keys, err)
	}
	// Deleting a key read in this process deletes its object.
	if err := d.del(ctx, "big", revs["big"]+5); !errors.Is(err, failure.Conflict) {
		t.Errorf("delete at a stale revision: %v, want Conflict", err)
	}
	if err := d.del(ctx, "big", 0); err != nil {
		t.Fatal(err)
	}
	// This process knew the current object only: the sweep finds the
	// other.
	if n := objectCount(t, d); n != 1 {
		t.Errorf("%d objects after deleting the large value, want 1", n)
	}
	if err := d.sweep(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := objectCount(t, d); n != 0 {
		t.Errorf("%d objects after the sweep, want 0", n)
	}
	if _, _, err := d.get(ctx, "big"); !errors.Is(err, failure.NotFound) {
		t.Errorf("get deleted: %v, want NotFound", err)
	}
	if _, err := d.put(ctx, "big", small, 0, 0); err != nil {
		t.Errorf("create after delete: %v", err)
	}
}

// TestDurableKVExpiry: a key expires after the bucket's MaxAge or its own
// TTL; its object goes with the bucket's MaxAge, or with a sweep.
func TestDurableKVExpiry(t *testing.T) {
	for _, tc := range []struct {
		name        string
		maxAge, ttl time.Duration
	}{{"bucket MaxAge", time.Second, 0}, {"per-key TTL", 0, time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			b, d := openTestKV(t, t.TempDir(), 64, tc.maxAge)
			defer b.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			big := []byte(`{"text":"` + strings.Repeat("z", 500) + `"}`)
			if _, err := d.put(ctx, "k", big, 0, tc.ttl); err != nil {
				t.Fatal(err)
			}
			if _, err := d.put(ctx, "keep", []byte(`{"a":1}`), 0, 0); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				_, _, err := d.get(ctx, "k")
				if errors.Is(err, failure.NotFound) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the key did not expire: %v", err)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if _, err := d.put(ctx, "k", []byte(`{"again":true}`), 0, 0); err != nil {
				t.Errorf("create after expiry: %v", err)
			}
			if n := objectCount(t, d); n != 0 && tc.maxAge == 0 {
				if err := d.sweep(ctx, 0); err != nil {
					t.Fatal(err)
				}
			}
			for n := objectCount(t, d); n != 0; n = objectCount(t, d) {
				if time.Now().After(deadline) {
					t.Fatalf("%d objects left after the key expired", n)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if _, _, err := d.get(ctx, "keep"); err != nil && tc.maxAge == 0 {
				t.Errorf("a key without TTL: %v", err)
			}
		})
	}
}

func TestStoreKey(t *testing.T) {
	for _, id := range []string{"sess-1_A", "a.b", "", "=x", "sp ace/ü", strings.Repeat("a", 300)} {
		k := storeKey(id)
		if strings.ContainsAny(k, " .*>ü") || k == "" {
			t.Errorf("storeKey(%q) = %q: not a single KV token", id, k)
		}
		back, err := idOfKey(k)
		if err != nil || back != id {
			t.Errorf("idOfKey(storeKey(%q)) = %q, %v", id, back, err)
		}
	}
}
