package a2a

import (
	"context"
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2alog "github.com/a2aproject/a2a-go/v2/log"
	"github.com/rs/zerolog"
)

// newSlogger returns a slog.Logger, for a2a-go (which logs with slog), that
// writes each record to l as one structured zerolog event: the record's
// message as the event's message and its attributes as fields (groups as
// nested objects, WithGroup names as dotted key prefixes, a2a-go's tasks and
// messages as their ids and states). Records below min are dropped, and so
// is everything when l is nil.
func newSlogger(l *zerolog.Logger, min slog.Level) *slog.Logger {
	if l == nil {
		nop := zerolog.Nop()
		l = &nop
	}
	return slog.New(a2alog.AttachFormatter(&zerologHandler{log: l, min: min}, a2alog.DefaultA2ATypeFormatter))
}

// zerologHandler is a slog.Handler writing to a zerolog.Logger.
type zerologHandler struct {
	log    *zerolog.Logger
	min    slog.Level
	prefix string      // WithGroup names, each followed by "."
	attrs  []slog.Attr // WithAttrs attributes, keys already prefixed
}

// zerologLevel maps a slog level onto zerolog's.
func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l < slog.LevelDebug:
		return zerolog.TraceLevel
	case l < slog.LevelInfo:
		return zerolog.DebugLevel
	case l < slog.LevelWarn:
		return zerolog.InfoLevel
	case l < slog.LevelError:
		return zerolog.WarnLevel
	default:
		return zerolog.ErrorLevel
	}
}

// Enabled implements slog.Handler.
func (h *zerologHandler) Enabled(_ context.Context, l slog.Level) bool {
	zl := zerologLevel(l)
	return l >= h.min && zl >= h.log.GetLevel() && zl >= zerolog.GlobalLevel()
}

// Handle implements slog.Handler.
func (h *zerologHandler) Handle(_ context.Context, r slog.Record) error {
	ev := h.log.WithLevel(zerologLevel(r.Level))
	if ev == nil {
		return nil
	}
	for _, a := range h.attrs {
		addAttr(ev, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(ev, h.prefix, a)
		return true
	})
	ev.Msg(r.Message)
	return nil
}

// WithAttrs implements slog.Handler.
func (h *zerologHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		a.Key = h.prefix + a.Key
		c.attrs = append(c.attrs, a)
	}
	return &c
}

// WithGroup implements slog.Handler.
func (h *zerologHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}

// addAttr adds one attribute to ev under prefix+key.
func addAttr(ev *zerolog.Event, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if a.Key == "" && v.Kind() != slog.KindGroup {
		return // slog: an empty attribute is ignored
	}
	key := prefix + a.Key
	switch v.Kind() {
	case slog.KindString:
		ev.Str(key, v.String())
	case slog.KindInt64:
		ev.Int64(key, v.Int64())
	case slog.KindUint64:
		ev.Uint64(key, v.Uint64())
	case slog.KindFloat64:
		ev.Float64(key, v.Float64())
	case slog.KindBool:
		ev.Bool(key, v.Bool())
	case slog.KindDuration:
		ev.Dur(key, v.Duration())
	case slog.KindTime:
		ev.Time(key, v.Time())
	case slog.KindGroup:
		g := v.Group()
		if len(g) == 0 {
			return
		}
		if a.Key == "" { // an inline group: its attributes join the parent
			for _, ga := range g {
				addAttr(ev, prefix, ga)
			}
			return
		}
		d := zerolog.Dict()
		for _, ga := range g {
			addAttr(d, "", ga)
		}
		ev.Dict(key, d)
	default:
		if err, ok := v.Any().(error); ok {
			ev.Str(key, err.Error())
		} else {
			ev.Interface(key, v.Any())
		}
	}
}

// slogInterceptor hands a2a-go's client calls the toolset's logger: a2a-go
// logs through the slog.Logger it finds in the call's context.
type slogInterceptor struct {
	a2aclient.PassthroughInterceptor
	log *slog.Logger
}

// Before implements a2aclient.CallInterceptor.
func (i slogInterceptor) Before(ctx context.Context, _ *a2aclient.Request) (context.Context, any, error) {
	return a2alog.AttachLogger(ctx, i.log), nil, nil
}
