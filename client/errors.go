package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The kinds of error a call returns, for errors.Is. An error answer of the
// server is an *APIError that matches the sentinel of its kind; errors the
// client finds itself wrap the sentinel.
var (
	// ErrInvalid: the server refused the request as it is, and repeating it
	// cannot help (HTTP 400 and 413; a malformed key or id, found before
	// anything was sent). Nothing was stored.
	ErrInvalid = errors.New("invalid request")
	// ErrTooLarge: a payload, or the whole request, is over the server's
	// limit (HTTP 413). It is an ErrInvalid too.
	ErrTooLarge = errors.New("request too large")
	// ErrNotFound: the message named does not exist (HTTP 404), or, for
	// Commit and Rollback, no longer does: it was rolled back.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the message's state does not allow the call (a
	// rollback of a committed message), or a key was sent again with a
	// different message (HTTP 409).
	ErrConflict = errors.New("conflict")
	// ErrUnauthorized: no token, or a token the server does not know
	// (HTTP 401).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: the token's role may not make the call (HTTP 403); a
	// producer needs the producer role.
	ErrForbidden = errors.New("forbidden")
	// ErrUnavailable: the server could not be reached, gave no answer, or
	// answered that it cannot serve now (HTTP 502, 503, 504) — after every
	// attempt the retry policy allows. Whether a send that ended so was
	// stored is unknown: send it again with the same key.
	ErrUnavailable = errors.New("server unavailable")
)

// APIError is an error answer of the server: its HTTP status and the error
// the body describes. It matches the sentinel of its kind with errors.Is.
type APIError struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Code is the API's name for the kind: invalid, too_large, not_found,
	// conflict, unauthorized, forbidden, unavailable or internal; empty
	// when the answer had no error body (a proxy's, say).
	Code string
	// Message says what went wrong, as the server wrote it.
	Message string
	// Hint, when the server gave one, says what to do about it.
	Hint string
	// Index is, for a message of SendBatch that the server refused, its
	// position in the slice (0-based); -1 when the error is not about one
	// message.
	Index int
}

// Error returns the server's message, with the batch position when there is
// one, and the HTTP status: "queuectl server: MESSAGE (HTTP 400)".
func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = strings.TrimSpace(fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode)))
	}
	if e.Index >= 0 {
		msg = fmt.Sprintf("message %d of the batch: %s", e.Index, msg)
	}
	return fmt.Sprintf("queuectl server: %s (HTTP %d)", msg, e.StatusCode)
}

// Is reports whether the error is of the kind target names: by the API's
// code, or by the HTTP status when the answer had no code.
func (e *APIError) Is(target error) bool {
	switch e.Code {
	case "invalid":
		return target == ErrInvalid
	case "too_large":
		return target == ErrTooLarge || target == ErrInvalid
	case "not_found":
		return target == ErrNotFound
	case "conflict":
		return target == ErrConflict
	case "unauthorized":
		return target == ErrUnauthorized
	case "forbidden":
		return target == ErrForbidden
	case "unavailable":
		return target == ErrUnavailable
	case "":
	default:
		return false
	}
	switch e.StatusCode {
	case http.StatusBadRequest:
		return target == ErrInvalid
	case http.StatusRequestEntityTooLarge:
		return target == ErrTooLarge || target == ErrInvalid
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusConflict:
		return target == ErrConflict
	case http.StatusUnauthorized:
		return target == ErrUnauthorized
	case http.StatusForbidden:
		return target == ErrForbidden
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return target == ErrUnavailable
	}
	return false
}

// errorBody is the API's error envelope.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
		Index   *int   `json:"index"`
	} `json:"error"`
}

// apiError reads an error answer. An answer that is not the API's
// envelope (a proxy's page) keeps only its status.
func apiError(status int, body []byte) *APIError {
	e := &APIError{StatusCode: status, Index: -1}
	var b errorBody
	if json.Unmarshal(body, &b) != nil || b.Error.Code == "" {
		return e
	}
	e.Code, e.Message, e.Hint = b.Error.Code, b.Error.Message, b.Error.Hint
	if b.Error.Index != nil {
		e.Index = *b.Error.Index
	}
	return e
}

// unavailable is a call that got no answer after its last attempt.
type unavailable struct {
	target   string
	attempts int
	err      error
}

func (e *unavailable) Error() string {
	after := ""
	if e.attempts > 1 {
		after = fmt.Sprintf(" after %d attempts", e.attempts)
	}
	return fmt.Sprintf("queuectl server %s: no answer%s: %v", e.target, after, e.err)
}

func (e *unavailable) Unwrap() error { return e.err }

func (e *unavailable) Is(target error) bool { return target == ErrUnavailable }

// invalidf is an error the client finds before it sends anything.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
