// Package p is a fixture of TestUnnamableFinds: each exported name below
// either uses a type users cannot name (bad) or not (ok).
package p

type hidden struct{}

type hiddenIface interface{ M() }

// Open is a struct whose exported fields use types users can name.
type Open struct {
	A int
	B []string
	c hidden // unexported field: fine
}

func BadReturn() *hidden              { return nil }
func BadParam(h hiddenIface)          {}
func BadNested() map[string][]*hidden { return nil }
func BadFunc() func() hidden          { return nil }
func OkReturn() *Open                 { return nil }
func OkIface() interface{ M() }       { return nil }

var BadVar hidden
var OkVar Open

type BadField struct{ F *hidden }

type BadMethod struct{}

func (BadMethod) Get() []hidden { return nil }
func (BadMethod) get() []hidden { return nil }
func (BadMethod) Fine() Open    { return Open{} }

type BadIface interface{ Get() hidden }

type BadGeneric struct{ G Box[hidden] }

type Box[T any] struct{ V T }
