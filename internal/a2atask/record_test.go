package a2atask

import (
	"testing"
	"time"
)

func FuzzDecodePageToken(f *testing.F) {
	f.Add(encodePageToken(cursor{Updated: time.Unix(1, 0), ID: "t1"}))
	f.Add(encodePageToken(cursor{Window: 42}))
	f.Add(encodePageToken(cursor{Window: 7, Updated: time.Unix(1, 0), ID: "t1"}))
	f.Add("")
	f.Add("e30")
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := decodePageToken(tok)
		if err == nil && c.ID == "" && c.Window == 0 {
			t.Fatal("accepted a token that names neither a task nor a window")
		}
	})
}
