package schema

import (
	"fmt"
	"strings"
	"testing"
)

// fastCases are schemas of the fast set with instances each way; every
// verdict is the full validator's, and the valid ones must be confirmed by
// the fast pass alone (else the fast path would never be taken).
var fastCases = []struct {
	name, schema string
	valid        []string // confirmed by the fast pass
	fallback     []string // valid, left to the full validator
	invalid      []string
}{
	{"object", `{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"}},"required":["city","temp_c"],"additionalProperties":false}`,
		[]string{`{"city":"Paris","temp_c":21}`, ` {"temp_c":-2.5e3 , "city":"K\u00f8ln \"x\""}` + "\n", `{"city":"Zürich","temp_c":0}`, `{"city":"a","temp_c":1,"city":"b"}`},
		[]string{`{"c\u0069ty":"Paris","temp_c":21}`, "{\"city\":\"\xff\",\"temp_c\":1}"},
		[]string{`{"city":"Paris"}`, `{"city":1,"temp_c":1}`, `{"city":"a","temp_c":1,"x":1}`, `{"city":"a","temp_c":1`, `[]`, `{"city":"a","temp_c":01}`,
			`{"city":"a","temp_c":1} x`, "{\"city\":\"a\x01\",\"temp_c\":1}", `{"city":"a\q","temp_c":1}`, `{"city":"a","temp_c":1.}`, `{"city":"a","temp_c":-}`, ``, `{"city":"a","temp_c":1,}`}},
	{"integer", `{"type":"array","items":{"type":"integer"}}`,
		[]string{`[]`, `[1,-0,20]`, `[ 1 , 2 ]`},
		[]string{`[1.0]`, `[1e2]`},
		[]string{`[1.5]`, `["1"]`, `[1,]`, `[,]`, `{}`, `[1 2]`}},
	{"nullable array", `{"type":["null","array"],"items":{"type":"object","required":["a"]}}`,
		[]string{`null`, `[{"a":null,"b":[1,{"c":true}]}]`},
		nil,
		[]string{`[{}]`, `true`, `nul`, `[{"b":1}]`}},
	{"additional schema", `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"n":true,"m":false},"additionalProperties":{"type":"boolean"},"required":["z"],"description":"d"}`,
		[]string{`{"z":true,"n":[{}],"y":false}`, `"not an object"`, `3`},
		nil,
		[]string{`{"n":1}`, `{"z":1}`, `{"z":true,"m":1}`}},
	{"true", `{"description":"anything"}`,
		[]string{`1`, `{"a":[null,"\ud800"]}`},
		nil,
		[]string{`{`, `tru`, `"`}},
}

func TestFastPath(t *testing.T) {
	for _, tc := range fastCases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache()
			e := c.entry([]byte(tc.schema))
			if e.err != nil || !e.hasFast {
				t.Fatalf("schema not of the fast set: %v", e.err)
			}
			check := func(inst string, wantFast, wantValid bool) {
				t.Helper()
				fast := e.fast.valid([]byte(inst))
				full := validateFull(e.s, []byte(inst))
				if fast != wantFast || (full == nil) != wantValid {
					t.Errorf("%q: fast %v (want %v), full %v (want valid %v)", inst, fast, wantFast, full, wantValid)
				}
				if got := c.Validate([]byte(tc.schema), []byte(inst)); fmt.Sprint(got) != fmt.Sprint(full) {
					t.Errorf("%q: Validate %v, full validator %v", inst, got, full)
				}
			}
			for _, v := range tc.valid {
				check(v, true, true)
			}
			for _, v := range tc.fallback {
				check(v, false, true)
			}
			for _, v := range tc.invalid {
				check(v, false, false)
			}
		})
	}
}

func TestFastPathDeclined(t *testing.T) {
	for _, s := range []string{
		`{"type":"string","format":"email"}`,
		`{"type":"string","pattern":"^a"}`,
		`{"type":"string","enum":["a"]}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"type":"integer"}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}]}`,
		`{"properties":{"a":{"minLength":1}}}`,
		`{"properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`,
		`{"type":"object","unevaluatedProperties":false}`,
	} {
		e := NewCache().entry([]byte(s))
		if e.err != nil || e.hasFast {
			t.Errorf("%s: err %v, fast %v; want compiled, without a fast path", s, e.err, e.hasFast)
		}
	}
	// More names than the required bits hold.
	var props []string
	for i := range 65 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string"}`, i))
	}
	if e := NewCache().entry([]byte(`{"properties":{` + strings.Join(props, ",") + `}}`)); e.err != nil || e.hasFast {
		t.Errorf("65 properties: err %v, fast %v", e.err, e.hasFast)
	}
}

func TestFastPathDeep(t *testing.T) {
	deep := strings.Repeat("[", maxFastDepth+5) + strings.Repeat("]", maxFastDepth+5)
	e := NewCache().entry([]byte(`{}`))
	if e.fast.valid([]byte(deep)) || validateFull(e.s, []byte(deep)) != nil {
		t.Fatal("a deep instance: want it left to the full validator, and valid")
	}
}

// FuzzFastAgrees holds the fast pass to the full validator: it never
// confirms an instance the full validator refuses.
func FuzzFastAgrees(f *testing.F) {
	for _, tc := range fastCases {
		for _, v := range append(append(append([]string{}, tc.valid...), tc.fallback...), tc.invalid...) {
			f.Add(tc.schema, v)
		}
	}
	f.Fuzz(func(t *testing.T, schema, instance string) {
		e := NewCache().entry([]byte(schema))
		if e.err != nil || !e.hasFast {
			return
		}
		if e.fast.valid([]byte(instance)) {
			if err := validateFull(e.s, []byte(instance)); err != nil {
				t.Fatalf("fast pass confirmed %q against %s; the full validator: %v", instance, schema, err)
			}
		}
	})
}
