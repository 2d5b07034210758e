package bedrock

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// codeKinds classifies Bedrock's error codes (the exception's name, from
// the x-amzn-ErrorType header or a stream's :exception-type); a code not
// listed is classified by its HTTP status.
var codeKinds = map[string]failure.Kind{
	"ThrottlingException":           failure.Transient,
	"ServiceUnavailableException":   failure.Transient,
	"InternalServerException":       failure.Transient,
	"ModelNotReadyException":        failure.Transient,
	"ModelStreamErrorException":     failure.Transient,
	"ServiceQuotaExceededException": failure.Transient,
	"AccessDeniedException":         failure.PermissionDenied,
	"UnrecognizedClientException":   failure.PermissionDenied,
	"InvalidSignatureException":     failure.PermissionDenied,
	"IncompleteSignature":           failure.PermissionDenied,
	"MissingAuthenticationToken":    failure.PermissionDenied,
	"ExpiredTokenException":         failure.PermissionDenied,
	"ModelTimeoutException":         failure.Timeout,
	"ValidationException":           failure.Model,
	"ResourceNotFoundException":     failure.Model,
	"ModelErrorException":           failure.Model,
}

// tooLong are the words of a ValidationException saying the prompt does
// not fit the model's context window.
var tooLong = []string{"input is too long", "too many input tokens", "prompt is too long", "exceeds the maximum", "context length", "context window"}

// classify turns an SDK error into a *failure.Error.
func (m *model) classify(ctx context.Context, err error) *failure.Error {
	if ctx.Err() != nil {
		return m.cls.Err(ctx, err)
	}
	var api smithy.APIError
	status := 0
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	switch {
	case errors.As(err, &api):
		return m.apiFailure(api, status, err)
	case errors.Is(err, errTooLong):
		return &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: m.name, Op: "generate",
			Message: errTooLong.Error(), Err: err}
	case isCredentialsError(err):
		f := m.cls.Err(ctx, err)
		if f.Kind != failure.Transient && f.Kind != failure.Timeout {
			f.Kind, f.Retryable = failure.Config, false
			f.Message = "no AWS credentials were found for Bedrock: configure the standard AWS chain (AWS_ACCESS_KEY_ID, AWS_PROFILE, a role) or set AWS_BEARER_TOKEN_BEDROCK"
		}
		return f
	}
	if status >= 300 {
		f := m.cls.Status(wire.HTTPFailure{Status: status})
		f.Err = m.cls.Scrub.ScrubErr(err)
		return f
	}
	var de *smithy.DeserializationError
	if errors.As(err, &de) {
		return &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: m.name, Op: "generate",
			Message: "the model provider's answer could not be read: " + m.cls.Scrub.Scrub(de.Error()), Err: m.cls.Scrub.ScrubErr(err)}
	}
	return m.cls.Err(ctx, err)
}

// classifyStream turns the error that ended an event stream into a
// *failure.Error: what is not the service's, the context's or the
// network's is a broken stream (bad framing, a checksum mismatch, an
// event that does not decode).
func (m *model) classifyStream(ctx context.Context, err error) *failure.Error {
	var api smithy.APIError
	if ctx.Err() != nil || errors.As(err, &api) || errors.Is(err, errTooLong) {
		return m.classify(ctx, err)
	}
	switch failure.From(err).Kind {
	case failure.Transient, failure.Timeout, failure.Canceled:
		return m.cls.Err(ctx, err)
	}
	return &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: m.name, Op: "generate",
		Message: "the model provider's event stream is malformed: " + m.cls.Scrub.Scrub(err.Error()), Err: m.cls.Scrub.ScrubErr(err)}
}

// apiFailure classifies an error the service reported, by its code, then
// its HTTP status.
func (m *model) apiFailure(api smithy.APIError, status int, err error) *failure.Error {
	code, msg := api.ErrorCode(), api.ErrorMessage()
	kind, known := codeKinds[code]
	if !known {
		kind = failure.Model
		if status != 0 {
			kind = wire.StatusKind(status)
		}
	}
	var text strings.Builder
	if status != 0 {
		text.WriteString("the model provider answered HTTP ")
		text.WriteString(strconv.Itoa(status))
	} else {
		text.WriteString("the model provider failed while streaming")
	}
	if code != "" {
		text.WriteString(" (" + code + ")")
	}
	if msg != "" {
		text.WriteString(": " + m.cls.Scrub.Scrub(msg))
	}
	if code == "ValidationException" && contextExceeded(msg) {
		f := m.cls.TooLong("ValidationException: " + msg)
		f.Err = m.cls.Scrub.ScrubErr(err)
		return f
	}
	return &failure.Error{Kind: kind, Source: failure.SourceModel, Name: m.name, Op: "generate",
		Retryable: kind == failure.Transient, Message: text.String(), Err: m.cls.Scrub.ScrubErr(err)}
}

func contextExceeded(msg string) bool {
	l := strings.ToLower(msg)
	for _, w := range tooLong {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
