package store_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/bus/store"
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
