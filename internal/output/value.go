package output

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// Value prints one value (a message, a queue, a bulk result). table prints
// the human form for -o table and wide; id gives what -o ids prints.
func Value(w io.Writer, f Format, v any, table func(w io.Writer, wide bool) error, id func() []string) error {
	bw := bufio.NewWriter(w)
	var err error
	switch f {
	case Table, Wide:
		err = table(bw, f == Wide)
	case JSON:
		var b []byte
		if b, err = json.MarshalIndent(v, "", "  "); err == nil {
			bw.Write(b)
			err = bw.WriteByte('\n')
		}
	case JSONL:
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			bw.Write(b)
			err = bw.WriteByte('\n')
		}
	case YAML:
		var b []byte
		if b, err = yaml.Marshal(v); err == nil {
			_, err = bw.Write(b)
		}
	case IDs:
		for _, s := range id() {
			fmt.Fprintln(bw, s)
		}
	default:
		err = fmt.Errorf("unknown output format %q", f)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// Fields prints label/value pairs as an aligned block, for the summary part
// of show commands. Values are escaped for the terminal.
func Fields(w io.Writer, pairs [][2]string) error {
	width := 0
	for _, p := range pairs {
		width = max(width, len(p[0]))
	}
	for _, p := range pairs {
		if _, err := fmt.Fprintf(w, "%-*s  %s\n", width+1, p[0]+":", Escape(p[1])); err != nil {
			return err
		}
	}
	return nil
}
