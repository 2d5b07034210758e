package schema

import "unicode/utf8"

// A fastSchema is a compiled schema that uses only the keywords most
// answer and argument schemas use (type, properties, required,
// additionalProperties, items, and annotations), checked in one pass
// over the instance's bytes, without decoding it. It only ever confirms
// that an instance is valid: when it cannot (the instance breaks the
// schema, is not JSON, or needs what the pass leaves to the full
// validator: an escaped property name, a fractional or exponent number
// where an integer is wanted, invalid UTF-8, deep nesting), Validate runs
// the full validator, whose verdict and message are the answer. So the
// fast path changes the cost of a valid instance, never a verdict
// (FuzzFastAgrees holds it to the full validator's).
//
// A nil *fastSchema is the schema true (anything is valid).
type fastSchema struct {
	never bool           // the schema false
	types typeSet        // 0: any type
	names map[string]int // property or required name → its index
	props []*fastSchema  // the subschema of names[i] (nil: any)
	decl  []bool         // names[i] is in properties
	req   uint64         // bit i: names[i] is required
	// additional applies to the properties not in properties; closed
	// means additionalProperties is false.
	additional *fastSchema
	closed     bool
	items      *fastSchema
}

type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tInteger
	tString
)

var typeNames = map[string]typeSet{"null": tNull, "boolean": tBoolean, "object": tObject, "array": tArray,
	"number": tNumber, "integer": tInteger, "string": tString}

// rootDrafts are the $schema values under which the fast keywords mean
// what they mean in 2020-12 (the default draft).
var rootDrafts = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2020-12/schema#": true,
	"https://json-schema.org/draft/2019-09/schema":  true,
	"https://json-schema.org/draft/2019-09/schema#": true,
	"http://json-schema.org/draft-07/schema":        true,
	"http://json-schema.org/draft-07/schema#":       true,
}

// annotations are keywords that do not take part in validation (format
// does: it is asserted for draft-07, so it is not one of them).
var annotations = map[string]bool{"title": true, "description": true, "$comment": true, "default": true,
	"examples": true, "deprecated": true, "readOnly": true, "writeOnly": true}

// maxFastDepth bounds the nesting the fast pass follows; deeper
// instances go to the full validator.
const maxFastDepth = 128

// compileFast returns the fast form of a decoded schema document that
// compiled, or false when it uses a keyword outside the fast set.
func compileFast(doc any) (*fastSchema, bool) {
	if m, ok := doc.(map[string]any); ok {
		if d, ok := m["$schema"]; ok {
			if s, ok := d.(string); !ok || !rootDrafts[s] {
				return nil, false
			}
		}
	}
	return fastOf(doc, true)
}

func fastOf(doc any, root bool) (*fastSchema, bool) {
	switch d := doc.(type) {
	case bool:
		if d {
			return nil, true
		}
		return &fastSchema{never: true}, true
	case map[string]any:
		f := &fastSchema{}
		open := true // the schema constrains nothing
		for k, v := range d {
			switch {
			case k == "type":
				ts, ok := typesOf(v)
				if !ok {
					return nil, false
				}
				f.types, open = ts, false
			case k == "properties":
				ps, ok := v.(map[string]any)
				if !ok {
					return nil, false
				}
				for name, sub := range ps {
					s, ok := fastOf(sub, false)
					if !ok {
						return nil, false
					}
					i := f.name(name)
					f.props[i], f.decl[i] = s, true
				}
				open = false
			case k == "required":
				rs, ok := v.([]any)
				if !ok {
					return nil, false
				}
				for _, r := range rs {
					name, ok := r.(string)
					if !ok {
						return nil, false
					}
					f.req |= 1 << f.name(name)
				}
				open = false
			case k == "additionalProperties":
				s, ok := fastOf(v, false)
				if !ok {
					return nil, false
				}
				f.additional, f.closed = s, s != nil && s.never
				open = false
			case k == "items":
				if _, isArray := v.([]any); isArray { // draft-07's tuple form
					return nil, false
				}
				s, ok := fastOf(v, false)
				if !ok {
					return nil, false
				}
				f.items, open = s, false
			case annotations[k], root && (k == "$schema" || k == "$defs" || k == "definitions"):
				// $defs are reached only by $ref, which is not a fast keyword.
			default:
				return nil, false
			}
		}
		if len(f.names) > 64 { // the required bits of one uint64
			return nil, false
		}
		if open {
			return nil, true
		}
		return f, true
	}
	return nil, false
}

// name returns the index of a property or required name, adding it.
func (f *fastSchema) name(n string) int {
	if i, ok := f.names[n]; ok {
		return i
	}
	if f.names == nil {
		f.names = map[string]int{}
	}
	f.names[n] = len(f.props)
	f.props = append(f.props, nil)
	f.decl = append(f.decl, false)
	return len(f.props) - 1
}

func typesOf(v any) (typeSet, bool) {
	var names []any
	switch t := v.(type) {
	case string:
		names = []any{t}
	case []any:
		names = t
	default:
		return 0, false
	}
	var ts typeSet
	for _, n := range names {
		s, _ := n.(string)
		t, ok := typeNames[s]
		if !ok {
			return 0, false
		}
		ts |= t
	}
	if ts == 0 {
		return 0, false
	}
	return ts, true
}

// allows reports whether f admits a value of type t (for a number, t is
// tNumber, plus tInteger when its literal has no fraction or exponent).
func (f *fastSchema) allows(t typeSet) bool {
	switch {
	case f == nil:
		return true
	case f.never:
		return false
	case f.types == 0:
		return true
	case t&tNumber != 0 && f.types&tNumber != 0:
		return true
	}
	return f.types&t != 0
}

// valid reports whether the instance is certainly one JSON value valid
// against f; false means "ask the full validator".
func (f *fastSchema) valid(instance []byte) bool {
	p := pass{b: instance}
	p.space()
	if !p.value(f, 0) {
		return false
	}
	p.space()
	return p.i == len(p.b)
}

// pass is one reading of an instance.
type pass struct {
	b []byte
	i int
}

func (p *pass) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *pass) value(f *fastSchema, depth int) bool {
	if p.i >= len(p.b) || depth > maxFastDepth {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return f.allows(tObject) && p.object(f, depth)
	case c == '[':
		if !f.allows(tArray) {
			return false
		}
		var items *fastSchema
		if f != nil {
			items = f.items
		}
		p.i++
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return true
		}
		for {
			p.space()
			if !p.value(items, depth+1) {
				return false
			}
			p.space()
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case ',':
				p.i++
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		if !f.allows(tString) {
			return false
		}
		_, ok := p.str(false)
		return ok
	case c == 't':
		return f.allows(tBoolean) && p.literal("true")
	case c == 'f':
		return f.allows(tBoolean) && p.literal("false")
	case c == 'n':
		return f.allows(tNull) && p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		integer, ok := p.number()
		t := tNumber
		if integer {
			t |= tInteger
		}
		return ok && f.allows(t)
	}
	return false
}

func (p *pass) object(f *fastSchema, depth int) bool {
	p.i++ // {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return f == nil || f.req == 0
	}
	var seen uint64
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return false
		}
		key, ok := p.str(true)
		if !ok {
			return false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		var sub *fastSchema
		if f != nil {
			i, named := f.names[string(key)]
			switch {
			case named && f.decl[i]:
				sub = f.props[i]
			case f.closed:
				return false
			default:
				sub = f.additional
			}
			if named {
				seen |= 1 << i
			}
		}
		// Every occurrence of a repeated name is checked, so the one the
		// full validator keeps (the last) is too.
		if !p.value(sub, depth+1) {
			return false
		}
		p.space()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return f == nil || seen&f.req == f.req
		default:
			return false
		}
	}
}

// str reads a string and returns its content, raw. A name with an
// escape (it would have to be decoded to be looked up), or a string with
// invalid UTF-8 (which the full decoder replaces), is left to the full
// validator (ok false), as is a raw control character or a bad escape
// (not JSON).
func (p *pass) str(name bool) (raw []byte, ok bool) {
	p.i++ // "
	start := p.i
	ascii, escaped := true, false
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			raw = p.b[start:p.i]
			p.i++
			if name && escaped {
				return nil, false
			}
			return raw, ascii || utf8.Valid(raw)
		case c == '\\':
			escaped = true
			if p.i+1 >= len(p.b) {
				return nil, false
			}
			switch p.b[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.b) {
					return nil, false
				}
				for _, h := range p.b[p.i+2 : p.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, false
					}
				}
				p.i += 6
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			p.i++
		}
	}
	return nil, false
}

func (p *pass) literal(word string) bool {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// number reads a number as JSON writes it; integer is true when it has
// neither fraction nor exponent.
func (p *pass) number() (integer, ok bool) {
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.b) {
		return false, false
	}
	switch c := p.b[p.i]; {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return false, false
	}
	integer = true
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return false, false
		}
		integer = false
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return false, false
		}
		integer = false
	}
	return integer, true
}

func (p *pass) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}
