package templates

import (
	"io/fs"
	"strings"
	"testing"
	"text/template"
)

func TestParse(t *testing.T) {
	names, err := fs.Glob(FS, "*.tmpl")
	if err != nil || len(names) == 0 {
		t.Fatalf("embedded templates: %v %v", names, err)
	}
	funcs := template.FuncMap{"join": strings.Join}
	for _, name := range names {
		if _, err := Parse(name, funcs); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Parse("missing.tmpl", funcs); err == nil {
		t.Error("a missing template parsed")
	}
}
