package grpc

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/switchboard-dev/switchboard/a2a"
)

// The well-known messages whose JSON form is not an object of their
// fields.
const (
	valueName     protoreflect.FullName = "google.protobuf.Value"     // its content
	listValueName protoreflect.FullName = "google.protobuf.ListValue" // an array
	structName    protoreflect.FullName = "google.protobuf.Struct"    // an object of its fields map
)

// jsonShape measures a message as its JSON form (protojson's) nests and
// counts, as the HTTP bindings measure a request's JSON: each object and
// array one level and one value, each key, string, number and literal one
// value. It stops at the first bound passed, so that it never walks
// deeper than a2a.MaxRequestDepth.
type jsonShape struct{ values int }

// checkShape refuses m when its JSON form nests deeper than
// a2a.MaxRequestDepth or holds more than a2a.MaxRequestValues values.
func checkShape(m protoreflect.Message) error {
	var s jsonShape
	return s.message(m, 0)
}

// add counts n values at depth.
func (s *jsonShape) add(n, depth int) error {
	s.values += n
	if depth > a2a.MaxRequestDepth {
		return fmt.Errorf("its JSON form nests deeper than %d levels (a2a.MaxRequestDepth)", a2a.MaxRequestDepth)
	}
	if s.values > a2a.MaxRequestValues {
		return fmt.Errorf("its JSON form holds more than %d values (a2a.MaxRequestValues)", a2a.MaxRequestValues)
	}
	return nil
}

// message measures m inside depth objects and arrays.
func (s *jsonShape) message(m protoreflect.Message, depth int) error {
	d := m.Descriptor()
	switch d.FullName() {
	case valueName:
		fd := m.WhichOneof(d.Oneofs().ByName("kind"))
		if fd == nil || fd.Kind() != protoreflect.MessageKind {
			return s.add(1, depth) // null, number, string, bool
		}
		return s.message(m.Get(fd).Message(), depth) // an object or an array
	case listValueName:
		if err := s.add(1, depth+1); err != nil {
			return err
		}
		l := m.Get(d.Fields().ByName("values")).List()
		for i := range l.Len() {
			if err := s.message(l.Get(i).Message(), depth+1); err != nil {
				return err
			}
		}
		return nil
	case structName:
		if err := s.add(1, depth+1); err != nil {
			return err
		}
		var err error
		m.Get(d.Fields().ByName("fields")).Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
			if err = s.add(1, depth+1); err == nil { // the key
				err = s.message(v.Message(), depth+1)
			}
			return err == nil
		})
		return err
	}
	if err := s.add(1, depth+1); err != nil { // an object of the set fields
		return err
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if err = s.add(1, depth+1); err == nil { // the key
			err = s.field(fd, v, depth+1)
		}
		return err == nil
	})
	return err
}

// field measures the value v of field fd inside depth objects and arrays.
func (s *jsonShape) field(fd protoreflect.FieldDescriptor, v protoreflect.Value, depth int) error {
	switch {
	case fd.IsList():
		if err := s.add(1, depth+1); err != nil {
			return err
		}
		l := v.List()
		for i := range l.Len() {
			if err := s.single(fd, l.Get(i), depth+1); err != nil {
				return err
			}
		}
		return nil
	case fd.IsMap():
		if err := s.add(1, depth+1); err != nil {
			return err
		}
		var err error
		v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
			if err = s.add(1, depth+1); err == nil { // the key
				err = s.single(fd.MapValue(), mv, depth+1)
			}
			return err == nil
		})
		return err
	}
	return s.single(fd, v, depth)
}

// single measures one value of field fd (an element, for a list).
func (s *jsonShape) single(fd protoreflect.FieldDescriptor, v protoreflect.Value, depth int) error {
	if k := fd.Kind(); k == protoreflect.MessageKind || k == protoreflect.GroupKind {
		return s.message(v.Message(), depth)
	}
	return s.add(1, depth)
}
