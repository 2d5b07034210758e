package skillwire

import (
	"encoding/json"
	"testing"
)

func TestResourcesJSON(t *testing.T) {
	tests := []struct {
		in      string
		dynamic bool
		files   int
		wantErr bool
	}{
		{in: `"dynamic"`, dynamic: true},
		{in: `[]`},
		{in: `[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":3}]`, files: 1},
		{in: `null`, wantErr: true},
		{in: `"static"`, wantErr: true},
		{in: `{}`, wantErr: true},
		{in: `[1]`, wantErr: true},
	}
	for _, tt := range tests {
		var r Resources
		err := json.Unmarshal([]byte(tt.in), &r)
		if (err != nil) != tt.wantErr || r.Dynamic != tt.dynamic || len(r.Files) != tt.files {
			t.Errorf("%s: %+v %v", tt.in, r, err)
		}
		if err == nil {
			out, _ := json.Marshal(r)
			var back Resources
			if err := json.Unmarshal(out, &back); err != nil || back.Dynamic != r.Dynamic || len(back.Files) != len(r.Files) {
				t.Errorf("%s: round trip %s: %v", tt.in, out, err)
			}
		}
	}
}

// FuzzListResult: any skills/list result a server sends decodes or fails
// with an error, never a panic, and what decodes re-encodes.
func FuzzListResult(f *testing.F) {
	f.Add([]byte(`{"resultType":"complete","skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}],"ttlMs":1,"cacheScope":"public"}`))
	f.Add([]byte(`{"skills":[{"uri":"x","resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:ab","size":-1}]}]}`))
	f.Add([]byte(`{"skills":[{"resources":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r ListResult
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("decoded %+v does not encode: %v", r, err)
		}
	})
}
