// Package require holds the assertions of the client's tests: the part of
// testify's require package that they use, on the standard library alone, so
// that the client's module requires no other module, for its tests either.
// Each function stops the test (t.FailNow) when its assertion fails; the
// optional msgAndArgs, a message or a format and its arguments, say why the
// assertion should hold.
package require

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// T is what the assertions need of a *testing.T.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

func fail(t T, msgAndArgs []any, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if why := message(msgAndArgs); why != "" {
		msg += "\n" + why
	}
	t.Errorf("%s", msg)
	t.FailNow()
}

func message(msgAndArgs []any) string {
	switch {
	case len(msgAndArgs) == 0:
		return ""
	case len(msgAndArgs) == 1:
		if s, ok := msgAndArgs[0].(string); ok {
			return s
		}
		return fmt.Sprintf("%+v", msgAndArgs[0])
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return fmt.Sprint(msgAndArgs...)
}

// equal is testify's ObjectsAreEqual: byte slices by their bytes, the rest
// by reflect.DeepEqual (so values of different types differ).
func equal(expected, actual any) bool {
	if expected == nil || actual == nil {
		return expected == actual
	}
	if e, ok := expected.([]byte); ok {
		a, ok := actual.([]byte)
		return ok && bytes.Equal(e, a)
	}
	return reflect.DeepEqual(expected, actual)
}

// isNil says whether v is nil or a nil pointer, map, slice, channel,
// function or interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

// isEmpty says whether v is nil, a zero value, an empty string, slice, map
// or channel, or a pointer to an empty value.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Chan, reflect.Map, reflect.Slice, reflect.Array, reflect.String:
		return rv.Len() == 0
	case reflect.Pointer:
		if rv.IsNil() {
			return true
		}
		return isEmpty(rv.Elem().Interface())
	}
	return rv.IsZero()
}

// contains says whether s (a string, slice, array or map) holds elem (a
// substring, an element or a key); ok is false when s is none of those.
func contains(s, elem any) (found, ok bool) {
	rv := reflect.ValueOf(s)
	switch rv.Kind() {
	case reflect.String:
		e, isString := elem.(string)
		if !isString {
			return false, false
		}
		return strings.Contains(rv.String(), e), true
	case reflect.Map:
		for _, k := range rv.MapKeys() {
			if equal(k.Interface(), elem) {
				return true, true
			}
		}
		return false, true
	case reflect.Slice, reflect.Array:
		for i := range rv.Len() {
			if equal(rv.Index(i).Interface(), elem) {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

// NoError asserts that err is nil.
func NoError(t T, err error, msgAndArgs ...any) {
	t.Helper()
	if err != nil {
		fail(t, msgAndArgs, "unexpected error: %v", err)
	}
}

// Error asserts that err is not nil.
func Error(t T, err error, msgAndArgs ...any) {
	t.Helper()
	if err == nil {
		fail(t, msgAndArgs, "an error was expected, got none")
	}
}

// ErrorIs asserts that errors.Is(err, target).
func ErrorIs(t T, err, target error, msgAndArgs ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		fail(t, msgAndArgs, "error %v is not %v", err, target)
	}
}

// ErrorAs asserts that errors.As(err, target).
func ErrorAs(t T, err error, target any, msgAndArgs ...any) {
	t.Helper()
	if !errors.As(err, target) {
		fail(t, msgAndArgs, "error %v (%T) is not a %s", err, err, reflect.TypeOf(target).Elem())
	}
}

// ErrorContains asserts that err is not nil and its message contains s.
func ErrorContains(t T, err error, s string, msgAndArgs ...any) {
	t.Helper()
	switch {
	case err == nil:
		fail(t, msgAndArgs, "an error containing %q was expected, got none", s)
	case !strings.Contains(err.Error(), s):
		fail(t, msgAndArgs, "error %q does not contain %q", err.Error(), s)
	}
}

// Equal asserts that expected and actual are equal, of the same type.
func Equal(t T, expected, actual any, msgAndArgs ...any) {
	t.Helper()
	if !equal(expected, actual) {
		fail(t, msgAndArgs, "not equal:\nexpected: %#v\nactual:   %#v", expected, actual)
	}
}

// NotEqual asserts that expected and actual differ.
func NotEqual(t T, expected, actual any, msgAndArgs ...any) {
	t.Helper()
	if equal(expected, actual) {
		fail(t, msgAndArgs, "should differ, both are %#v", actual)
	}
}

// JSONEq asserts that two JSON documents hold the same value.
func JSONEq(t T, expected, actual string, msgAndArgs ...any) {
	t.Helper()
	var e, a any
	if err := json.Unmarshal([]byte(expected), &e); err != nil {
		fail(t, msgAndArgs, "expected is not JSON: %v\n%s", err, expected)
	}
	if err := json.Unmarshal([]byte(actual), &a); err != nil {
		fail(t, msgAndArgs, "actual is not JSON: %v\n%s", err, actual)
	}
	if !reflect.DeepEqual(e, a) {
		fail(t, msgAndArgs, "JSON not equal:\nexpected: %s\nactual:   %s", expected, actual)
	}
}

// True asserts that v is true.
func True(t T, v bool, msgAndArgs ...any) {
	t.Helper()
	if !v {
		fail(t, msgAndArgs, "should be true")
	}
}

// False asserts that v is false.
func False(t T, v bool, msgAndArgs ...any) {
	t.Helper()
	if v {
		fail(t, msgAndArgs, "should be false")
	}
}

// Nil asserts that v is nil.
func Nil(t T, v any, msgAndArgs ...any) {
	t.Helper()
	if !isNil(v) {
		fail(t, msgAndArgs, "should be nil: %#v", v)
	}
}

// NotNil asserts that v is not nil.
func NotNil(t T, v any, msgAndArgs ...any) {
	t.Helper()
	if isNil(v) {
		fail(t, msgAndArgs, "should not be nil")
	}
}

// Empty asserts that v is empty: nil, zero, or of length 0.
func Empty(t T, v any, msgAndArgs ...any) {
	t.Helper()
	if !isEmpty(v) {
		fail(t, msgAndArgs, "should be empty: %#v", v)
	}
}

// NotEmpty asserts that v is not empty.
func NotEmpty(t T, v any, msgAndArgs ...any) {
	t.Helper()
	if isEmpty(v) {
		fail(t, msgAndArgs, "should not be empty: %#v", v)
	}
}

// Len asserts that v (a string, slice, array, map or channel) has length n.
func Len(t T, v any, n int, msgAndArgs ...any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Chan, reflect.Map, reflect.Slice, reflect.Array, reflect.String:
		if rv.Len() != n {
			fail(t, msgAndArgs, "should have %d items, has %d: %#v", n, rv.Len(), v)
		}
	default:
		fail(t, msgAndArgs, "%#v has no length", v)
	}
}

// Contains asserts that s (a string, slice, array or map) holds elem (a
// substring, an element or a key).
func Contains(t T, s, elem any, msgAndArgs ...any) {
	t.Helper()
	found, ok := contains(s, elem)
	switch {
	case !ok:
		fail(t, msgAndArgs, "%#v cannot contain %#v", s, elem)
	case !found:
		fail(t, msgAndArgs, "%#v does not contain %#v", s, elem)
	}
}

// NotContains asserts that s does not hold elem.
func NotContains(t T, s, elem any, msgAndArgs ...any) {
	t.Helper()
	found, ok := contains(s, elem)
	switch {
	case !ok:
		fail(t, msgAndArgs, "%#v cannot contain %#v", s, elem)
	case found:
		fail(t, msgAndArgs, "%#v should not contain %#v", s, elem)
	}
}

// ElementsMatch asserts that two slices hold the same elements, in any
// order, each as often.
func ElementsMatch(t T, expected, actual any, msgAndArgs ...any) {
	t.Helper()
	e, a := reflect.ValueOf(expected), reflect.ValueOf(actual)
	if e.Kind() != reflect.Slice || a.Kind() != reflect.Slice {
		fail(t, msgAndArgs, "ElementsMatch needs two slices, got %T and %T", expected, actual)
	}
	used := make([]bool, a.Len())
	var missing []any
outer:
	for i := range e.Len() {
		for j := range a.Len() {
			if !used[j] && equal(e.Index(i).Interface(), a.Index(j).Interface()) {
				used[j] = true
				continue outer
			}
		}
		missing = append(missing, e.Index(i).Interface())
	}
	var extra []any
	for j := range a.Len() {
		if !used[j] {
			extra = append(extra, a.Index(j).Interface())
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		fail(t, msgAndArgs, "elements differ:\nexpected: %#v\nactual:   %#v\nmissing: %#v\nextra:   %#v",
			expected, actual, missing, extra)
	}
}

// Less asserts that a < b.
func Less[V cmp.Ordered](t T, a, b V, msgAndArgs ...any) {
	t.Helper()
	if !(a < b) {
		fail(t, msgAndArgs, "%v should be less than %v", a, b)
	}
}

// LessOrEqual asserts that a <= b.
func LessOrEqual[V cmp.Ordered](t T, a, b V, msgAndArgs ...any) {
	t.Helper()
	if !(a <= b) {
		fail(t, msgAndArgs, "%v should be at most %v", a, b)
	}
}

// GreaterOrEqual asserts that a >= b.
func GreaterOrEqual[V cmp.Ordered](t T, a, b V, msgAndArgs ...any) {
	t.Helper()
	if !(a >= b) {
		fail(t, msgAndArgs, "%v should be at least %v", a, b)
	}
}

// Regexp asserts that re matches s.
func Regexp(t T, re *regexp.Regexp, s string, msgAndArgs ...any) {
	t.Helper()
	if !re.MatchString(s) {
		fail(t, msgAndArgs, "%q does not match %s", s, re)
	}
}
