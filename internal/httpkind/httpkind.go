// Package httpkind classifies the HTTP status codes of failed responses as
// failure kinds.
package httpkind

import (
	"net/http"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// FromStatus classifies an HTTP status code of a failed response: 429,
// 502, 503 and 504 are Transient; 500 is Transient; 401 and 403 are
// PermissionDenied; 408 is Timeout; other 4xx are Protocol (our request was
// wrong); anything else is Unknown.
func FromStatus(code int) failure.Kind {
	switch {
	case code == http.StatusTooManyRequests, code >= 500 && code <= 599:
		return failure.Transient
	case code == http.StatusRequestTimeout:
		return failure.Timeout
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return failure.PermissionDenied
	case code >= 400 && code <= 499:
		return failure.Protocol
	}
	return failure.Unknown
}
