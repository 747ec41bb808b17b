package domain

import (
	"errors"
	"strings"
	"unicode"
)

// FieldError is a refusal that names one input by its field: the name the
// API's requests give it ("queues", "sub"). Each front end says the name in
// its own words, by one rule: the API and the audit log as it is (Error),
// the CLI as the flag that sets it (Flag: --queues). The message is the
// text before the name, the name, and the text after it.
type FieldError struct {
	kind          error
	before, after string
	// Field is the input's name as the API gives it.
	Field string
	hint  string
}

// FieldErr returns an error of the given kind (one of the sentinels) whose
// message is before, the field's name, after; hint is the optional second
// line.
func FieldErr(kind error, before, field, after, hint string) error {
	return &FieldError{kind: kind, before: before, Field: field, after: after, hint: hint}
}

func (e *FieldError) Error() string { return e.before + e.Field + e.after }
func (e *FieldError) Unwrap() error { return e.kind }

// Hint returns an optional second line that tells the user what to do.
func (e *FieldError) Hint() string { return e.hint }

// Render says the message with the field named by name.
func (e *FieldError) Render(name func(field string) string) string {
	return e.before + name(e.Field) + e.after
}

// Flag is the CLI's flag for an API field: --queues for queues,
// --delivered-before for delivered_before.
func Flag(field string) string { return "--" + strings.ReplaceAll(field, "_", "-") }

// RenderFields says err's message with the field of the FieldError it
// wraps, if any, named by name; the text that wrapping added stays.
func RenderFields(err error, name func(field string) string) string {
	msg := err.Error()
	var fe *FieldError
	if !errors.As(err, &fe) {
		return msg
	}
	return strings.Replace(msg, fe.Error(), fe.Render(name), 1)
}

// ParseFieldError rebuilds the FieldError of a message that names field,
// as an API client reads an error the server rendered: the message is
// split at the first place where field stands as a word of its own. A
// message that does not name it is an error of kind with the message as it
// is.
func ParseFieldError(kind error, msg, field, hint string) error {
	isWord := func(r rune) bool { return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	for from := 0; field != ""; {
		i := strings.Index(msg[from:], field)
		if i < 0 {
			break
		}
		i += from
		j := i + len(field)
		startOK := i == 0 || !isWord(rune(msg[i-1]))
		endOK := j == len(msg) || !isWord(rune(msg[j]))
		if startOK && endOK {
			return FieldErr(kind, msg[:i], field, msg[j:], hint)
		}
		from = j
	}
	return WithHint(kind, msg, hint)
}
