module github.com/fsmgen/fsmgen/svg

go 1.26.8

require (
	github.com/fsmgen/fsmgen v0.0.0
	github.com/goccy/go-graphviz v0.2.10
)

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/disintegration/imaging v1.6.2 // indirect
	github.com/flopp/go-findfont v0.1.0 // indirect
	github.com/fogleman/gg v1.3.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
	github.com/tetratelabs/wazero v1.10.1 // indirect
	golang.org/x/image v0.21.0 // indirect
	golang.org/x/text v0.19.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/fsmgen/fsmgen => ..
