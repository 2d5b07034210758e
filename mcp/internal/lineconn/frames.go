package lineconn

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/tidwall/gjson"
)

// frameReader splits a stream into JSON values as go-sdk's stream
// connection does (json.Decoder: a value may span lines, and what follows
// it on its line must be the line's end), a line at a time. A line that
// is one JSON value and nothing else, what every MCP peer writes, is
// checked by one pass of gjson's validator, several times faster than
// the decoder's scanner, which was a tenth of a call's CPU in
// the gateway. Any other line (a value spanning lines, a value followed
// by more, garbage) is handed, with the rest of the stream, to a
// json.Decoder that reads the stream from then on, so that such streams
// read exactly as before.
type frameReader struct {
	br  *bufio.Reader
	max int // bound on one frame in bytes (0: none)
	buf []byte

	dec     *json.Decoder // once the stream left the one-value-a-line form
	src     *bufio.Reader // what dec reads, through limiter
	limiter *frameLimit
}

// frameReadSize is the line reader's buffer: a line longer than this is
// gathered in frameReader.buf.
const frameReadSize = 64 << 10

func newFrameReader(r io.Reader, maxFrame int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, frameReadSize), max: maxFrame}
}

// next returns the next JSON value and whether it came off the fast path
// (then it is known to be valid JSON, and it aliases the reader's buffer
// until the next call: a caller that keeps it copies it). Errors are the
// decoder's (a *json.SyntaxError, io.EOF, io.ErrUnexpectedEOF),
// errTrailingData, errFrameTooLarge, or the reader's.
func (f *frameReader) next() (raw []byte, fast bool, err error) {
	if f.dec != nil {
		return f.decode()
	}
	for {
		line, err := f.line()
		if err != nil && !errors.Is(err, io.EOF) || len(line) == 0 {
			return nil, false, err
		}
		v := trimLineEnd(line)
		if f.max > 0 && len(v) > f.max {
			return nil, false, errFrameTooLarge
		}
		if start := skipSpace(v, 0); start == len(v) {
			if err != nil {
				return nil, false, err
			}
			continue // a blank line, which the decoder skips too
		} else if !isSpace(v[len(v)-1]) && gjson.ValidBytes(v[start:]) {
			return v[start:], true, nil
		}
		// Not one value alone on its line: the decoder reads from here on.
		f.src = bufio.NewReader(io.MultiReader(bytes.NewReader(bytes.Clone(line)), f.br))
		var r io.Reader = f.src
		if f.max > 0 {
			f.limiter = &frameLimit{r: r, limit: f.max}
			r = f.limiter
		}
		f.dec = json.NewDecoder(r)
		return f.decode()
	}
}

// line reads up to and including the next newline (less at the stream's
// end, with io.EOF). A line longer than the reader's buffer is gathered
// in f.buf, failing with errFrameTooLarge once it holds more than f.max
// bytes and the "\r\n" (next checks the bound on every line).
func (f *frameReader) line() ([]byte, error) {
	b, err := f.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return b, err
	}
	f.buf = append(f.buf[:0], b...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if f.max > 0 && len(f.buf) > f.max+2 {
			return nil, errFrameTooLarge
		}
		b, err = f.br.ReadSlice('\n')
		f.buf = append(f.buf, b...)
	}
	return f.buf, err
}

// decode is the decoder's next value, which what follows it on its line
// must end.
func (f *frameReader) decode() ([]byte, bool, error) {
	if f.limiter != nil {
		f.limiter.count = 0
	}
	var raw json.RawMessage
	err := f.dec.Decode(&raw)
	if err == nil {
		// The byte after the value: in the decoder's buffer, else (the
		// frame bound stopped it reading ahead) the next one in src.
		var b [1]byte
		next, rerr := b[:], error(nil)
		n, _ := f.dec.Buffered().Read(next)
		if n == 0 {
			next, rerr = f.src.Peek(1)
		}
		switch {
		case len(next) > 0 && next[0] != '\n' && next[0] != '\r':
			err = errTrailingData
		case rerr != nil && rerr != io.EOF:
			err = rerr
		}
	}
	return raw, false, err
}

// trimLineEnd is line without its "\n" or "\r\n".
func trimLineEnd(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}
