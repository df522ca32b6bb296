package inspect

import (
	"html/template"
	"time"
)

// funcs are the templates' helpers; each returns text, which the templates escape.
var funcs = template.FuncMap{
	// when writes a time in UTC to the second, "" for the zero time.
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	// ago writes how long before now t was, to the second.
	"ago": func(now, t time.Time) string {
		if t.IsZero() {
			return ""
		}
		d := now.Sub(t).Round(time.Second)
		if d < 0 {
			return "in " + (-d).String()
		}
		return d.String() + " ago"
	},
	"inc": func(i int) int { return i + 1 },
}
