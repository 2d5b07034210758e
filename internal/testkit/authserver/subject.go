package authserver

import (
	"errors"
	"net/http"
	"strings"

	"github.com/ory/fosite"
)

// Subject returns the subject (the user who logged in) of the request's
// bearer token, so that an MCP server in front can bind its sessions to
// users.
func (s *Server) Subject(r *http.Request) (string, error) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return "", errors.New("no bearer token")
	}
	_, ar, err := s.fos.IntrospectToken(r.Context(), tok, fosite.AccessToken, &fosite.DefaultSession{})
	if err != nil {
		return "", err
	}
	return ar.GetSession().GetSubject(), nil
}
