// Package output renders command results in the formats of §5: table, wide,
// json, jsonl, yaml and ids. A command builds its data once and hands it to
// the renderer the -o flag chose; lists are streamed, so memory does not grow
// with the number of rows printed.
package output

import (
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// Format is an output format chosen with -o/--output.
type Format string

// The output formats of §5.
const (
	Table Format = "table"
	Wide  Format = "wide"
	JSON  Format = "json"
	JSONL Format = "jsonl"
	YAML  Format = "yaml"
	IDs   Format = "ids"
)

// Formats lists every format, for help texts and completion.
var Formats = []Format{Table, Wide, JSON, JSONL, YAML, IDs}

// ParseFormat checks a -o value.
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range Formats {
		if v == f {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, v := range Formats {
		names[i] = string(v)
	}
	return "", domain.Invalidf("output format %q is not one of %s", s, strings.Join(names, ", "))
}

// Tabular reports whether f is one of the human table formats.
func (f Format) Tabular() bool { return f == Table || f == Wide }
