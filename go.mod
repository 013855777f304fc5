module github.com/realizar-host/realizar-host

go 1.26

toolchain go1.26.8

require github.com/stretchr/testify v1.12.1

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.42.0 // indirect
)
