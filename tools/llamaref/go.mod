module github.com/realizar-host/realizar-host/tools/llamaref

go 1.26.0

toolchain go1.26.8

replace github.com/realizar-host/realizar-host => ../..

require (
	github.com/hybridgroup/yzma v1.28.0
	github.com/jupiterrider/ffi v0.7.0
	github.com/realizar-host/realizar-host v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/ebitengine/purego v0.10.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
