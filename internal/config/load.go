package config

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/queuectl/queuectl/internal/domain"
)

// EnvPrefix is the prefix of the environment variables that set configuration keys.
const EnvPrefix = "QUEUECTL"

// flagKeys maps global flag names to their configuration keys. --server is
// stored as server_url because server: is the serve section of the file.
var flagKeys = map[string]string{
	"db": "db", "store": "store", "server": "server_url", "context": "context",
	"token": "token", "token-file": "token_file", "ca-file": "ca_file", "output": "output",
	"no-color": "no_color", "quiet": "quiet", "timeout": "timeout",
}

func setDefaults(v *viper.Viper) {
	v.SetDefault("db", DefaultDBPath())
	v.SetDefault("store", "")
	v.SetDefault("server_url", "")
	v.SetDefault("context", "")
	v.SetDefault("token", "")
	v.SetDefault("token_file", "")
	v.SetDefault("ca_file", "")
	v.SetDefault("output", "table")
	v.SetDefault("no_color", false)
	v.SetDefault("quiet", false)
	v.SetDefault("timeout", "0s")
	v.SetDefault("engine.role", "central")
	v.SetDefault("engine.node_id", "")
	v.SetDefault("engine.workers", 32)
	v.SetDefault("engine.eo_window", 64)
	v.SetDefault("engine.poll_interval", "1s")
	v.SetDefault("engine.max_payload", "10MiB")
	v.SetDefault("engine.retry.count", 3)
	v.SetDefault("engine.retry.interval", "5m")
	v.SetDefault("engine.retry.backoff", "fixed")
	v.SetDefault("engine.retry.max_interval", "1h")
	v.SetDefault("engine.blacklisting.enabled", true)
	v.SetDefault("engine.blacklisting.crashes", 2)
	v.SetDefault("engine.retention.delivered", "24h")
	v.SetDefault("engine.retention.failed", "720h")
	v.SetDefault("engine.retention.audit", "2160h")
	v.SetDefault("engine.shutdown_timeout", "30s")
	v.SetDefault("tx.check_after", "30s")
	v.SetDefault("tx.check_interval", "30s")
	v.SetDefault("tx.max_checks", 10)
	v.SetDefault("tx.check_timeout", "10s")
	v.SetDefault("server.listen", "")
	v.SetDefault("server.tls_cert", "")
	v.SetDefault("server.tls_key", "")
	v.SetDefault("cluster.heartbeat", "1s")
	v.SetDefault("cluster.lease_ttl", "10s")
	v.SetDefault("current_context", "")
}

// DefaultDBPath is $XDG_DATA_HOME/queuectl/queuectl.db (~/.local/share/... when unset).
func DefaultDBPath() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "queuectl", "queuectl.db")
}

// DefaultFile is $XDG_CONFIG_HOME/queuectl/config.yaml (~/.config/... when unset).
func DefaultFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "queuectl", "config.yaml")
}

// Load builds the effective configuration from the parsed global flags, the
// environment and the config file: the one named by --config (which must
// exist), else the default file if it exists.
func Load(flags *pflag.FlagSet) (*Config, error) {
	v := viper.New()
	setDefaults(v)
	for name, key := range flagKeys {
		if f := flags.Lookup(name); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return nil, err
			}
		}
	}

	file, explicit := "", false
	if f := flags.Lookup("config"); f != nil && f.Value.String() != "" {
		file, explicit = f.Value.String(), true
	} else if env := os.Getenv(EnvPrefix + "_CONFIG"); env != "" {
		file, explicit = env, true
	} else {
		file = DefaultFile()
	}
	var raw []byte
	if file != "" {
		var err error
		raw, err = ReadBounded(file, MaxFile)
		var pe *fs.PathError
		switch {
		case errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) && !explicit:
			file = ""
		case errors.As(err, &pe):
			return nil, domain.Invalidf("config file %s: %v", file, pe.Err)
		case err != nil:
			return nil, domain.Invalidf("config file %v", err)
		}
	}
	if file != "" {
		v.SetConfigType("yaml")
		if err := v.ReadConfig(bytes.NewReader(raw)); err != nil {
			return nil, domain.Invalidf("config file %s is not valid YAML: %v", file, err)
		}
	}
	// Every key, of the defaults or the file, may be set as QUEUECTL_<KEY>,
	// each bound by name: AutomaticEnv would also take QUEUECTL_SERVER (the
	// --server URL) for the whole server: section and lose its tokens.
	for _, key := range v.AllKeys() {
		env := EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
		if key == "server_url" {
			env = EnvPrefix + "_SERVER"
		}
		if err := v.BindEnv(key, env); err != nil {
			return nil, err
		}
	}

	var c Config
	hook := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.TextUnmarshallerHookFunc(),
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	))
	// Unknown keys are problems like any other, reported with the rest by
	// Validate rather than on their own, the first one stopping the read.
	var md mapstructure.Metadata
	if err := v.Unmarshal(&c, hook, func(dc *mapstructure.DecoderConfig) { dc.Metadata = &md }); err != nil {
		return nil, domain.Invalidf("configuration: %s", cleanDecodeError(err))
	}
	c.unknown = unknownKeys(md)
	if file != "" {
		if err := restoreKeyCase(file, raw, &c); err != nil {
			return nil, err
		}
	}
	if os.Getenv("NO_COLOR") != "" {
		c.NoColor = true
	}
	c.File = file
	// A store file named on the command line or in the environment is a
	// target of its own, which the file's current_context does not
	// override; the default path, or db: in the file, is not.
	if f := flags.Lookup("db"); (f != nil && f.Changed) || os.Getenv(EnvPrefix+"_DB") != "" {
		c.DBExplicit = true
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// unknownKeys are the keys of the configuration that name no setting, each
// a problem with the setting it was perhaps meant to be.
func unknownKeys(md mapstructure.Metadata) []error {
	var out []error
	for _, unused := range slices.Sorted(slices.Values(md.Unused)) {
		key := keyPath(unused)
		parent, name := "", key
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			parent, name = key[:i+1], key[i+1:]
		}
		var siblings []string
		for _, f := range settingsAt(reflect.TypeFor[Config](), unused) {
			siblings = append(siblings, parent+f)
		}
		out = append(out, domain.Invalidf("%s is not a setting%s", key, domain.DidYouMean(parent+name, siblings)))
	}
	return out
}

// settingsAt lists the settings beside a decoder's key: the mapstructure
// names of the struct the key's last part would be a field of, found by
// following its parts from t (a map's key and a list's index stand for its
// element).
func settingsAt(t reflect.Type, key string) []string {
	parts := strings.FieldsFunc(key, func(r rune) bool { return r == '.' || r == '[' })
	for _, part := range parts[:len(parts)-1] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map, reflect.Slice:
			t = t.Elem() // part is the key or the index, "wms]" or "0]"
			continue
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return nil
			}
			t = f.Type
			if t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
				continue // the next part names the entry
			}
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for f := range t.Fields() {
		if tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ","); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// fieldByTag finds a struct's field by its mapstructure name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// keyPath writes a decoder's key as the file would: a map's entry as a
// dotted part (receivers.wms.url), a list's index in brackets (routes[0]).
func keyPath(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		switch {
		case k[i] == '[' && i+1 < len(k) && (k[i+1] < '0' || k[i+1] > '9'):
			b.WriteByte('.')
			j := strings.IndexByte(k[i:], ']')
			if j < 0 {
				b.WriteString(k[i+1:])
				return b.String()
			}
			b.WriteString(k[i+1 : i+j])
			i += j
		default:
			b.WriteByte(k[i])
		}
	}
	return b.String()
}

// cleanDecodeError turns mapstructure's multi-line error into one line.
func cleanDecodeError(err error) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "decoding failed due to the following error(s):\n\n", "")
	s = strings.ReplaceAll(s, "\n", "; ")
	return strings.TrimSpace(s)
}

// LoadFile loads the configuration from one file, with the environment and
// defaults but no flags.
func LoadFile(path string) (*Config, error) {
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	fs.String("config", path, "")
	return Load(fs)
}
