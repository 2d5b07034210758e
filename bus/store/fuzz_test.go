package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
)

// FuzzStoreKeys: any id maps to one KV token and back; a stored value is
// a pointer or not, never a panic.
func FuzzStoreKeys(f *testing.F) {
	for _, s := range []string{"ses_1", "a.b", "", "=", "=zz", "ü", "a b*>", strings.Repeat("x", 300), `@{"v":1,"obj":"T/k/x","size":3}`, `@{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		k := store.StoreKey(id)
		if k == "" || strings.ContainsAny(k, " .*>\t\r\n") {
			t.Fatalf("StoreKey(%q) = %q", id, k)
		}
		back, err := store.IDOfKey(k)
		if err != nil || back != id {
			t.Fatalf("IDOfKey(StoreKey(%q)) = %q, %v", id, back, err)
		}
		_, _ = store.IDOfKey(id)
		_ = store.BlobName([]byte(id))
	})
}

// FuzzDecodeKVValue: a typed bucket's value is decoded or refused with a
// Protocol failure, never a panic.
func FuzzDecodeKVValue(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "payloads", "kv.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(seed), ``, `null`, `{}`, `{"v":2}`, `{"v":1}`, `{"v":"1"}`, `[1,2]`, `{"v":1,"value":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := store.DecodeKVValue[kvTask](data); err != nil && !errors.Is(err, failure.Protocol) {
			t.Fatalf("%q: %v is not a Protocol failure", data, err)
		}
	})
}

// TestDecodeKVSeed pins what the documented value (testdata) decodes to.
func TestDecodeKVSeed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "payloads", "kv.json"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := store.DecodeKVValue[kvTask](data); err != nil || v.State != "working" {
		t.Errorf("kv: %+v, %v", v, err)
	}
}
