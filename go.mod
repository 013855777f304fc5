module github.com/realizar-host/realizar-host

go 1.26

toolchain go1.26.8
