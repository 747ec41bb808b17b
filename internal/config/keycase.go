package config

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/domain"
)

// namedSections are the parts of the file whose map keys are names the user
// chose: receivers and senders are matched against message fields, which
// are case-sensitive (§2), and contexts are selected by name.
type namedSections struct {
	Receivers yaml.Node `yaml:"receivers"`
	Senders   yaml.Node `yaml:"senders"`
	Contexts  yaml.Node `yaml:"contexts"`
}

// restoreKeyCase gives back the names in the file as written, which viper
// lowercases: without it a receiver configured as WMS would be stored as wms
// and never match a message sent to WMS. A name that YAML reads as null, like
// the NULL receiver of §8, keeps its text too.
func restoreKeyCase(file string, b []byte, c *Config) error {
	var raw namedSections
	err := yaml.Unmarshal(b, &raw)
	if err != nil {
		return domain.Invalidf("config file %s is not valid YAML: %v", file, err)
	}
	for i := 0; i+1 < len(raw.Receivers.Content); i += 2 {
		name, body := raw.Receivers.Content[i], raw.Receivers.Content[i+1]
		rc, ok := c.Receivers[viperKey(name)]
		if !ok {
			continue
		}
		if rc.Headers, err = recase("receivers."+name.Value+".headers", rc.Headers, mappingValue(body, "headers")); err != nil {
			return err
		}
		// Environment variable names are case-sensitive.
		if rc.Env, err = recase("receivers."+name.Value+".env", rc.Env, mappingValue(body, "env")); err != nil {
			return err
		}
		c.Receivers[viperKey(name)] = rc
	}
	if c.Receivers, err = recase("receivers", c.Receivers, &raw.Receivers); err != nil {
		return err
	}
	if c.Senders, err = recase("senders", c.Senders, &raw.Senders); err != nil {
		return err
	}
	c.Contexts, err = recase("contexts", c.Contexts, &raw.Contexts)
	return err
}

// viperKey is the key viper made of a mapping key: lowercased, and empty for
// a key YAML reads as null.
func viperKey(k *yaml.Node) string {
	if k.Tag == "!!null" {
		return ""
	}
	return strings.ToLower(k.Value)
}

// mappingValue returns the value node of key in a mapping node, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// recase returns m with viper's keys replaced by the keys of the mapping
// node as written.
func recase[V any](section string, m map[string]V, mapping *yaml.Node) (map[string]V, error) {
	if len(m) == 0 || mapping == nil || mapping.Kind != yaml.MappingNode {
		return m, nil
	}
	written := make(map[string]string, len(mapping.Content)/2)
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		k := mapping.Content[i]
		if other, dup := written[viperKey(k)]; dup {
			return nil, domain.Invalidf("%s: %q and %q differ only in case; the configuration cannot tell them apart", section, other, k.Value)
		}
		written[viperKey(k)] = k.Value
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		if n, ok := written[k]; ok {
			k = n
		}
		out[k] = v
	}
	return out, nil
}
