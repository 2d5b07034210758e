// Package otelenv installs OpenTelemetry for a program that embeds
// Switchboard: traces and metrics configured by OpenTelemetry's own
// environment variables, through the contrib autoexport package and the
// SDK's resource detection. It is the setup cmd/demo, cmd/switchboard and
// the examples share:
//
//	func main() {
//		ctx := context.Background()
//		defer otelenv.Main(ctx, "my-service", os.Stderr)()
//		// agents, MCP managers, A2A peers and the bus now export their
//		// spans and metrics where OTEL_EXPORTER_OTLP_ENDPOINT points
//	}
//
// or, to handle errors yourself, [Start] and [Setup.Close].
//
// A signal is on when its exporter is named (OTEL_TRACES_EXPORTER,
// OTEL_METRICS_EXPORTER, other than "none") or an OTLP endpoint is set for
// it (OTEL_EXPORTER_OTLP_ENDPOINT, or the signal's own
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_METRICS_ENDPOINT);
// with nothing set both are off and Start changes nothing.
// OTEL_EXPORTER_OTLP_PROTOCOL (and its per-signal forms) chooses grpc or
// http/protobuf; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the
// service (the program's default only when neither does);
// OTEL_SDK_DISABLED=true turns everything off.
package otelenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Config is what a program says of itself; everything else comes from the
// environment.
type Config struct {
	// Service is service.name when neither OTEL_SERVICE_NAME nor
	// OTEL_RESOURCE_ATTRIBUTES names one.
	Service string
	// Version is service.version unless the environment gives one ("": none).
	Version string
	// ShutdownTimeout bounds Close's flush (0: 10s).
	ShutdownTimeout time.Duration
	// Logger receives the SDK's errors as they happen (a failed export;
	// nil: none). Close reports them either way.
	Logger *zerolog.Logger
}

// Setup is the telemetry a program installed: the global tracer and meter
// providers while it runs. Close flushes and shuts them down.
type Setup struct {
	tp       *sdktrace.TracerProvider // nil: traces off
	mp       *sdkmetric.MeterProvider // nil: metrics off
	timeout  time.Duration
	prevTP   trace.TracerProvider
	prevMP   metric.MeterProvider
	errs     *errorLog
	once     sync.Once
	closeErr error
}

// Enabled reports which signals the environment turns on.
func Enabled() (traces, metrics bool) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false, false
	}
	return signalOn("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
		signalOn("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
}

func signalOn(exporterVar, endpointVar string) bool {
	if v := strings.TrimSpace(os.Getenv(exporterVar)); v != "" {
		return v != "none"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv(endpointVar) != ""
}

// Start installs the signals the environment turns on as otel's global
// providers, with W3C trace context and baggage as the global propagator.
// The returned Setup is never nil; with nothing on it does nothing.
func Start(ctx context.Context, cfg Config) (*Setup, error) {
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	s := &Setup{timeout: cfg.ShutdownTimeout}
	traces, metrics := Enabled()
	if !traces && !metrics {
		return s, nil
	}
	res, err := newResource(ctx, cfg.Service, cfg.Version)
	if err != nil {
		return s, err
	}
	if traces {
		exp, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			return s, fmt.Errorf("telemetry: the trace exporter (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*): %w", err)
		}
		if !autoexport.IsNoneSpanExporter(exp) {
			s.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		}
	}
	if metrics {
		r, err := autoexport.NewMetricReader(ctx)
		if err != nil {
			if s.tp != nil {
				_ = s.tp.Shutdown(ctx)
			}
			return &Setup{timeout: cfg.ShutdownTimeout}, fmt.Errorf("telemetry: the metric exporter (OTEL_METRICS_EXPORTER, OTEL_EXPORTER_OTLP_*): %w", err)
		}
		if !autoexport.IsNoneMetricReader(r) {
			s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r), sdkmetric.WithResource(res))
		}
	}
	s.errs = &errorLog{log: cfg.Logger}
	otel.SetErrorHandler(s.errs)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if s.tp != nil {
		s.prevTP = otel.GetTracerProvider()
		otel.SetTracerProvider(s.tp)
	}
	if s.mp != nil {
		s.prevMP = otel.GetMeterProvider()
		otel.SetMeterProvider(s.mp)
	}
	return s, nil
}

// newResource is the resource of the environment (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES) over the program's defaults: service.name
// service and service.version version, each only where the environment
// does not say.
func newResource(ctx context.Context, service, version string) (*resource.Resource, error) {
	var base []attribute.KeyValue
	if service != "" {
		base = append(base, attribute.String("service.name", service))
	}
	if version != "" {
		base = append(base, attribute.String("service.version", version))
	}
	env, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("telemetry: the resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(base...), env) // the environment's win
	if err != nil {
		return nil, fmt.Errorf("telemetry: the resource: %w", err)
	}
	return res, nil
}

// Traces and Metrics report which signals are exported.
func (s *Setup) Traces() bool  { return s.tp != nil }
func (s *Setup) Metrics() bool { return s.mp != nil }

// Close flushes what is buffered, shuts the providers down and restores
// the globals it replaced. Its error says whether anything failed to
// export, at the end or while the program ran: a program reports it as a
// failure, never as "exported".
func (s *Setup) Close() error {
	s.once.Do(func() {
		if s.tp == nil && s.mp == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		var errs []error
		if s.tp != nil {
			if err := s.tp.ForceFlush(ctx); err != nil {
				errs = append(errs, fmt.Errorf("exporting traces: %w", err))
			}
			if err := s.tp.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("shutting the tracer provider down: %w", err))
			}
			otel.SetTracerProvider(s.prevTP)
		}
		if s.mp != nil {
			if err := s.mp.ForceFlush(ctx); err != nil {
				errs = append(errs, fmt.Errorf("exporting metrics: %w", err))
			}
			if err := s.mp.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("shutting the meter provider down: %w", err))
			}
			otel.SetMeterProvider(s.prevMP)
		}
		if err := s.errs.err(); err != nil {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			s.closeErr = fmt.Errorf("telemetry: %w", errors.Join(errs...))
		}
	})
	return s.closeErr
}

// errorLog is the otel error handler while a Setup runs: the SDK reports a
// failed background export there, and Close reports it.
type errorLog struct {
	log   *zerolog.Logger
	mu    sync.Mutex
	n     int
	first error
}

// Handle implements otel.ErrorHandler.
func (l *errorLog) Handle(err error) {
	if l.log != nil {
		l.log.Warn().Err(err).Msg("telemetry: OpenTelemetry reported an error")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		l.first = err
	}
	l.n++
}

func (l *errorLog) err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.n {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("an export failed: %w", l.first)
	}
	return fmt.Errorf("%d exports failed, the first: %w", l.n, l.first)
}

// Main is [Start] for a program's main: an error starting,
// or a failed export when the returned function runs, is one line on w.
// Defer the function it returns.
func Main(ctx context.Context, service string, w io.Writer) (stop func()) {
	s, err := Start(ctx, Config{Service: service})
	if err != nil {
		fmt.Fprintln(w, "telemetry is off:", err)
	}
	return func() {
		if err := s.Close(); err != nil {
			fmt.Fprintln(w, err)
		}
	}
}
