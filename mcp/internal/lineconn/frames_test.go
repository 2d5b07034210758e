package lineconn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// decoderFrames is how the stream was read before frameReader: a
// json.Decoder over the whole stream, each value followed by its line's
// end.
func decoderFrames(data []byte, maxFrame int) (frames []string, end error) {
	var r io.Reader = bytes.NewReader(data)
	var limiter *frameLimit
	if maxFrame > 0 {
		limiter = &frameLimit{r: r, limit: maxFrame}
		r = limiter
	}
	dec := json.NewDecoder(r)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			var next [1]byte
			if n, rerr := dec.Buffered().Read(next[:]); n > 0 {
				if next[0] != '\n' && next[0] != '\r' {
					err = errTrailingData
				}
			} else if rerr != nil && rerr != io.EOF {
				err = rerr
			}
		}
		if err != nil {
			return frames, err
		}
		frames = append(frames, string(raw))
		if limiter != nil {
			limiter.count = 0
		}
	}
}

// readerFrames reads data with a frameReader, checking that every value
// it vouches for is valid JSON.
func readerFrames(data []byte, maxFrame int) (frames []string, end error, err error) {
	fr := newFrameReader(bytes.NewReader(data), maxFrame)
	for {
		raw, valid, rerr := fr.next()
		if rerr != nil {
			return frames, rerr, nil
		}
		if valid && !json.Valid(raw) {
			return nil, nil, fmt.Errorf("the fast path vouched for %q, which is not valid JSON", raw)
		}
		frames = append(frames, string(raw))
	}
}

// endKind classes how a stream ended, as the connection reports it.
func endKind(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		return "eof"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected eof"
	case errors.Is(err, errTrailingData):
		return "trailing data"
	case errors.Is(err, errFrameTooLarge):
		return "too large"
	case errors.As(err, &se):
		return "syntax"
	}
	return fmt.Sprintf("other: %v", err)
}

// sameFrames: the frame reader reads data as the decoder did (without a
// bound: with one, the old reader's check of what follows a value saw
// only the bytes the bound let it read ahead): the same values, ended the
// same way; under a bound, a prefix of them, each within it, cut short
// only by a frame over it.
func sameFrames(data []byte, maxFrame int) error {
	want, wantEnd := decoderFrames(data, 0)
	got, gotEnd, err := readerFrames(data, maxFrame)
	if err != nil {
		return err
	}
	mismatch := fmt.Errorf("%q, bound %d:\nframe reader %q, %v\ndecoder      %q, %v", data, maxFrame, got, gotEnd, want, wantEnd)
	if len(got) > len(want) || strings.Join(got, "\x00") != strings.Join(want[:len(got)], "\x00") {
		return mismatch
	}
	for _, f := range got {
		if maxFrame > 0 && len(f) > maxFrame {
			return fmt.Errorf("%q: a %d-byte frame passed the %d-byte bound", data, len(f), maxFrame)
		}
	}
	if endKind(gotEnd) == "too large" {
		if maxFrame == 0 {
			return mismatch
		}
		return nil
	}
	if len(got) != len(want) || endKind(gotEnd) != endKind(wantEnd) {
		return mismatch
	}
	return nil
}

var frameStreams = []string{
	`{"a":1}` + "\n" + `{"b":2}` + "\n",
	`{"a":1}` + "\r\n" + "\n\n  \t\n" + `  {"b":2}`,
	`{"a":` + "\n" + `1}` + "\n" + `{"b":2}` + "\n",
	`{"a":1} ` + "\n",
	`{"a":1}` + "\r" + ` x` + "\n",
	`{"a":1}{"b":2}` + "\n",
	`{"a":1}` + "\n" + `Server started` + "\n" + `{"b":2}` + "\n",
	`[{"a":1},` + "\n" + `{"b":2}]` + "\n",
	`123` + "\n" + `"s"` + "\n" + `null`,
	`{"a":"\u00e9\ud800"}` + "\n",
	"{\"a\":\"\x01\"}\n",
	"{\"a\":\"\xff\"}\n",
	`{"a":01}` + "\n",
	`{"a":1`,
	"",
	"\n",
	" \v{}\n",
	"{}\u00a0\n",
}

func TestFrameReaderSameAsDecoder(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", 3*frameReadSize) + `"}`
	streams := append(frameStreams, big+"\n"+`{"b":2}`+"\n", big, `{"a":`+"\n"+big[5:]+"\n")
	for _, s := range streams {
		for _, limit := range []int{0, 16, 4 * frameReadSize} {
			if err := sameFrames([]byte(s), limit); err != nil {
				t.Errorf("limit %d: %v", limit, err)
			}
		}
	}
}

// FuzzFrameReader: any stream reads as the decoder read it, and only
// valid JSON takes the fast path.
func FuzzFrameReader(f *testing.F) {
	for _, s := range frameStreams {
		f.Add([]byte(s), 0)
	}
	f.Add([]byte(`{"a":"xxxxxxxxxxxxxxxxxxxxxxx"}`+"\n"), 8)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if len(data) > 1<<16 || limit < 0 || limit > 1<<20 {
			return
		}
		if err := sameFrames(data, limit); err != nil {
			t.Fatal(err)
		}
	})
}
