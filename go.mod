module github.com/surfacelog/surface

go 1.26

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/leanovate/gopter v0.2.11 // indirect
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
