package schema

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	c := NewCache()
	cases := []struct {
		name, schema, value string
		wantErr             string // "" means valid
		badSchema           bool
	}{
		{"2020-12 default", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, `{"n":1}`, "", false},
		{"missing property", `{"type":"object","required":["n"]}`, `{}`, "missing property 'n'", false},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{"b":1}`, "additional properties 'b'", false},
		{"draft-07 items array", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}]}`, `[1]`, "at /0", false},
		{"2020-12 prefixItems", `{"type":"array","prefixItems":[{"type":"string"}]}`, `["x",2]`, "", false},
		{"not JSON value", `{"type":"object"}`, `{`, "not valid JSON", false},
		{"schema not JSON", `{`, `{}`, "", true},
		{"external ref refused", `{"$ref":"https://example.com/s.json"}`, `{}`, "", true},
		{"file ref refused", `{"$ref":"file:///etc/passwd"}`, `{}`, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Validate([]byte(tc.schema), []byte(tc.value))
			switch {
			case tc.badSchema:
				if !errors.Is(err, ErrBadSchema) {
					t.Fatalf("err = %v, want ErrBadSchema", err)
				}
			case tc.wantErr == "":
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
			}
		})
	}
}

func TestCacheReusesCompiled(t *testing.T) {
	c := NewCache()
	s1, err1 := c.Compile([]byte(`{"type":"string"}`))
	s2, err2 := c.Compile([]byte(`{"type":"string"}`))
	if err1 != nil || err2 != nil || s1 != s2 {
		t.Fatalf("not cached: %p %p %v %v", s1, s2, err1, err2)
	}
}

func FuzzValidate(f *testing.F) {
	f.Add(`{"type":"object"}`, `{}`)
	f.Add(`{"$ref":"#/$defs/a","$defs":{"a":{"type":"integer"}}}`, `1`)
	f.Add(`{"pattern":"(a+)+$"}`, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaa!"`)
	f.Fuzz(func(t *testing.T, schema, value string) {
		_ = NewCache().Validate([]byte(schema), []byte(value))
	})
}
