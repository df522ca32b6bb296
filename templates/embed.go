// Package templates embeds the text/templates of fsmgen's document emitters
// (machine.md.tmpl: the Markdown document of a machine). The templates receive data whose
// spec text is already escaped for the output format; they only arrange it.
package templates

import (
	"embed"
	"text/template"
)

// FS holds every *.tmpl file of this directory.
//
//go:embed *.tmpl
var FS embed.FS

// Parse parses the embedded template file name (e.g. "machine.md.tmpl") with funcs
// available to it. It parses afresh on every call, so callers share no template state.
func Parse(name string, funcs template.FuncMap) (*template.Template, error) {
	return template.New(name).Funcs(funcs).Option("missingkey=error").ParseFS(FS, name)
}
