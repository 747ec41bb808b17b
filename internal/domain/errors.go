package domain

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error that reaches a user wraps one of them, and the
// CLI's exit code and the API's status are chosen from it in one place.
var (
	// ErrInvalid marks bad input: a value breaks a rule of §2, §5 or §7. Exit 2, HTTP 400.
	ErrInvalid = errors.New("invalid")
	// ErrTooLarge marks a payload over engine.max_payload. Exit 2, HTTP 413.
	ErrTooLarge = errors.New("too large")
	// ErrNotFound marks a message, queue or other object that does not exist. Exit 3, HTTP 404.
	ErrNotFound = errors.New("not found")
	// ErrConflict marks a compare-and-set that lost: the status is not the expected one. Exit 4, HTTP 409.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable marks a store or server that cannot be reached or is locked. Exit 6, HTTP 503.
	ErrUnavailable = errors.New("unavailable")
	// ErrPermission marks a refused request. Exit 7, HTTP 403.
	ErrPermission = errors.New("permission denied")
	// ErrNoSpace marks a write refused because the disk of the store (or
	// of the database) is full: nothing of it was written. Such an error is
	// also ErrUnavailable — exit 6 — and the API answers 507.
	ErrNoSpace = errors.New("no space left on the device")
)

// noSpaceError is a write refused for a full disk.
type noSpaceError struct {
	msg, hint string
	cause     error
}

func (e *noSpaceError) Error() string   { return e.msg }
func (e *noSpaceError) Hint() string    { return e.hint }
func (e *noSpaceError) Unwrap() []error { return []error{ErrUnavailable, ErrNoSpace, e.cause} }

// NoSpace returns the error of a write to where (a store) that failed with
// cause because the disk is full.
func NoSpace(where string, cause error) error {
	return &noSpaceError{
		msg:   fmt.Sprintf("%s cannot be written: its disk is full (%v); nothing of this change was written", where, cause),
		hint:  "free space on the disk, then try again",
		cause: cause,
	}
}

// kindError carries a message for the user and the sentinel that classifies it.
type kindError struct {
	kind error
	msg  string
	hint string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// Hint returns an optional second line that tells the user what to do.
func (e *kindError) Hint() string { return e.hint }

// Errorf returns an error of the given kind (one of the sentinels) whose text
// is exactly the formatted message, without the sentinel's own text.
func Errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// WithHint returns an error of the given kind with a hint line for the user.
func WithHint(kind error, msg, hint string) error {
	return &kindError{kind: kind, msg: msg, hint: hint}
}

// Invalidf returns an ErrInvalid error with the formatted message.
func Invalidf(format string, args ...any) error { return Errorf(ErrInvalid, format, args...) }

// NotFoundf returns an ErrNotFound error with the formatted message.
func NotFoundf(format string, args ...any) error { return Errorf(ErrNotFound, format, args...) }

// Conflictf returns an ErrConflict error with the formatted message.
func Conflictf(format string, args ...any) error { return Errorf(ErrConflict, format, args...) }

// HintOf returns the hint carried by err, if any.
func HintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
