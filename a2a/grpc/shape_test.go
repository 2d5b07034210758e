package grpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/switchboard-dev/switchboard/a2a"
)

// jsonCounts is how the JSON form of m nests and counts, as the HTTP
// bindings count a request's JSON: its deepest nesting of objects and
// arrays, and its values (objects, arrays, keys, strings, numbers,
// literals).
func jsonCounts(t *testing.T, m proto.Message) (depth, values int) {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	open := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return depth, values
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			open++
			depth = max(depth, open)
			values++
		case json.Delim('}'), json.Delim(']'):
			open--
		default:
			values++
		}
	}
}

// request is a SendMessageRequest with a text part, metadata and a data
// part holding data.
func request(data *structpb.Value) *a2apb.SendMessageRequest {
	meta, _ := structpb.NewStruct(map[string]any{"trace": "t1", "tags": []any{"a", "b"}, "n": 3})
	return &a2apb.SendMessageRequest{Tenant: "acme", Metadata: meta,
		Configuration: &a2apb.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}},
		Message: &a2apb.Message{MessageId: "m1", Role: a2apb.Role_ROLE_USER,
			Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hello"}}, {Content: &a2apb.Part_Data{Data: data}}}}}
}

func nested(depth int, leaf *structpb.Value) *structpb.Value {
	v := leaf
	for i := range depth {
		if i%2 == 0 {
			v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
		} else {
			v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"k": v}})
		}
	}
	return v
}

func numberList(n int) *structpb.Value {
	l := &structpb.ListValue{Values: make([]*structpb.Value, n)}
	for i := range l.Values {
		l.Values[i] = structpb.NewNumberValue(float64(i))
	}
	return structpb.NewListValue(l)
}

// TestCheckShapeIsJSONs (issue 33, item 1): checkShape refuses exactly
// the messages whose JSON form (protojson's) passes the HTTP bindings'
// bounds on a request's JSON: around each bound, its verdict is the one
// counting the JSON form gives.
func TestCheckShapeIsJSONs(t *testing.T) {
	baseDepth, baseValues := jsonCounts(t, request(structpb.NewNullValue()))
	tests := []struct {
		name    string
		msg     proto.Message
		refused bool
	}{
		{"small", request(structpb.NewStringValue("x")), false},
		{"depth one under the bound", request(nested(a2a.MaxRequestDepth-baseDepth-1, structpb.NewBoolValue(true))), false},
		{"depth at the bound", request(nested(a2a.MaxRequestDepth-baseDepth, structpb.NewBoolValue(true))), false},
		{"depth one past the bound", request(nested(a2a.MaxRequestDepth-baseDepth+1, structpb.NewBoolValue(true))), true},
		// numberList(n) is n+1 values where the null was 1.
		{"values one under the bound", request(numberList(a2a.MaxRequestValues - baseValues - 1)), false},
		{"values at the bound", request(numberList(a2a.MaxRequestValues - baseValues)), false},
		{"values one past the bound", request(numberList(a2a.MaxRequestValues - baseValues + 1)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			depth, values := jsonCounts(t, tt.msg)
			jsonRefused := depth > a2a.MaxRequestDepth || values > a2a.MaxRequestValues
			if jsonRefused != tt.refused {
				t.Fatalf("the case is built wrong: its JSON form nests %d levels and holds %d values", depth, values)
			}
			if err := checkShape(tt.msg.ProtoReflect()); (err != nil) != tt.refused {
				t.Fatalf("JSON form nests %d levels and holds %d values; checkShape: %v; want refused %v", depth, values, err, tt.refused)
			}
		})
	}
}
