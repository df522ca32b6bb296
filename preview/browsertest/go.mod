module github.com/fsmgen/fsmgen/preview/browsertest

go 1.26.8

require (
	github.com/chromedp/cdproto v0.0.0-20250724212937-08a3db8b4327
	github.com/chromedp/chromedp v0.14.2
	github.com/fsmgen/fsmgen/bench v0.0.0
)

require (
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/fsmgen/fsmgen v0.0.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20250725192818-e39067aee2d2 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
	golang.org/x/sys v0.34.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/fsmgen/fsmgen => ../..
	github.com/fsmgen/fsmgen/bench => ../../bench
)

// The fsmgen the tests build and run (fsmgen preview, and the fsmgen sim commands the page prints).
tool github.com/fsmgen/fsmgen/cmd/fsmgen
