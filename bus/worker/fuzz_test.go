package worker

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// decoderFor is the decoder of a payload kind; the testdata file names
// start with the kind.
func decoderFor(kind string) func([]byte) (any, error) {
	switch kind {
	case "start":
		return func(d []byte) (any, error) { return decodeStart(d) }
	case "ack":
		return func(d []byte) (any, error) { return decodeAck(d) }
	case "job":
		return func(d []byte) (any, error) { return decodeJobMessage(d) }
	case "control":
		return func(d []byte) (any, error) { return decodeControl(d) }
	case "info":
		return func(d []byte) (any, error) { return decodeWorkerInfo(d) }
	case "beat":
		return func(d []byte) (any, error) { return decodeBeat(d) }
	}
	return nil
}

// TestPayloadExamples decodes every example of docs/bus.md (the seed
// corpus in testdata/payloads) with its decoder.
func TestPayloadExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	if len(files) == 0 {
		t.Fatal("no payloads in testdata/payloads")
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			kind, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".json"), "_")
			dec := decoderFor(kind)
			if dec == nil {
				t.Fatalf("no decoder for %q", kind)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dec(data); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Other versions are refused as Protocol failures wrapping ErrVersion.
	_, err := decodeStart([]byte(`{"v":2,"job":"j"}`))
	if !errors.Is(err, failure.Protocol) || !errors.Is(err, wire.ErrVersion) {
		t.Errorf("v2 start request: %v", err)
	}
}

// seeds adds every testdata payload and a few broken ones to f.
func seeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{``, `null`, `{}`, `{"v":2}`, `{"v":1}`, `{"v":"1"}`, `[1]`, `{"v":1,"job":""}`,
		`{"v":1,"refused":"maybe"}`, `{"v":1,"worker":"w","runs":[""]}`, `{"v":1,"worker":"w","interval_ms":-5,"runs":null}`, `{"v":1,"seq":0,"type":"heartbeat"}`, `{"v":1,"seq":1,"type":"event"}`,
		`{"v":1,"seq":1,"type":"event","event":{"type":""}}`, `{"v":1,"op":"explode"}`, `{"v":1,"job":"j","heartbeat_ms":-1}`} {
		f.Add([]byte(s))
	}
}

// fuzzDecoder checks that a decoder never panics, fails only with typed
// Protocol failures, and that what it accepts re-encodes to something it
// accepts again.
func fuzzDecoder[T any](f *testing.F, decode func([]byte) (T, error)) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decode(data)
		if err != nil {
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Kind != failure.Protocol || fe.Source != failure.SourceBus {
				t.Fatalf("decode error is not a bus Protocol failure: %v", err)
			}
			return
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return // e.g. an event carrying raw JSON that does not re-encode
		}
		var obj map[string]any
		if err := json.Unmarshal(enc, &obj); err != nil {
			t.Fatal(err)
		}
		obj["v"] = wire.Version
		again, _ := json.Marshal(obj)
		if _, err := decode(again); err != nil {
			t.Fatalf("re-encoded payload %s does not decode: %v", again, err)
		}
	})
}

func FuzzDecodeStart(f *testing.F)      { fuzzDecoder(f, decodeStart) }
func FuzzDecodeAck(f *testing.F)        { fuzzDecoder(f, decodeAck) }
func FuzzDecodeJobMessage(f *testing.F) { fuzzDecoder(f, decodeJobMessage) }
func FuzzDecodeControl(f *testing.F)    { fuzzDecoder(f, decodeControl) }
func FuzzDecodeWorkerInfo(f *testing.F) { fuzzDecoder(f, decodeWorkerInfo) }
func FuzzDecodeBeat(f *testing.F)       { fuzzDecoder(f, decodeBeat) }
