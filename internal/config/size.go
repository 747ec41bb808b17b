package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// Size is a byte count written like 10MiB, 512KB or 1048576.
type Size int64

// ParseSize reads a byte count with an optional unit: B, KB/KiB, MB/MiB,
// GB/GiB (KB and KiB both mean 1024 bytes, as operators expect of payload limits).
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToUpper(strings.TrimSpace(t[i:]))
	}
	mult := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10,
		"M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || v < 0 || v*mult >= 1<<63 {
		return 0, domain.Invalidf("size %q is not a byte count like 10MiB, 512KiB or 1048576", s)
	}
	return Size(v * mult), nil
}

// String renders the size the way the config file writes it: in the largest
// binary unit that holds it exactly (10MiB, 512KiB), else in bytes, so that
// it reads back as the same size.
func (s Size) String() string {
	n := int64(s)
	for _, u := range []struct {
		suffix string
		bytes  int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// MarshalYAML writes the size in config-file form.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// UnmarshalText lets viper's decoder and flags accept "10MiB".
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalText renders the size for JSON and text.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

var _ fmt.Stringer = Size(0)
