package importer

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// TestQuote: every name and text reads back from the YAML the spec writes as itself.
func TestQuote(t *testing.T) {
	for _, s := range []string{"idle", "in_progress", "red.walk", "on", "Off", "YES", "n", "null", "true",
		"1abc", "a b", "a: b", "#x", "-x", "x-", "é", "日本", `a"b`, `a\b`, "x\u2028y", "tab\there",
		"line\nbreak", "bom\ufeff", "nul\x00", "c1\u0085", "{a}", "[a]", "*a", "&a", "!a", "%a", "@a", "`a", "'a'", ""} {
		for _, q := range []string{quote(s), dquote(s)} {
			var v struct {
				K *string `yaml:"k"`
			}
			if err := yaml.Unmarshal([]byte("k: "+q+"\n"), &v); err != nil || v.K == nil || *v.K != s {
				t.Errorf("%q written as %s does not read back (%v)", s, q, err)
			}
		}
	}
}
