module github.com/fsmgen/fsmgen

go 1.26.8

require (
	github.com/dave/jennifer v1.7.1
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	golang.org/x/tools v0.52.0
	gopkg.in/yaml.v3 v3.0.1
)
