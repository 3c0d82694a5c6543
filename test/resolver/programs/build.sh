#!/bin/sh
# Builds the clients of the differential resolver test into OUTDIR:
#   OUTDIR/gai-musl   static musl program (Debian's musl-tools: musl-gcc)
#   OUTDIR/lookup-go  Go program with CGO_ENABLED=0 (Debian's golang-go): Go's own resolver
# No network: the Go program uses only the standard library, GOPROXY=off, and every Go cache
# lives under OUTDIR.
#   build.sh OUTDIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

musl-gcc -static -O1 -Wall -o "$out/gai-musl" "$here/gai.c"

mkdir -p "$out/gocache" "$out/gopath"
# No -trimpath: it changes every package's build ID, so Go would recompile the whole standard
# library (minutes on a busy 2-CPU machine) instead of reusing Debian's prebuilt one (seconds).
cd "$here/go"
env CGO_ENABLED=0 GOCACHE="$out/gocache" GOPATH="$out/gopath" GOMODCACHE="$out/gopath/pkg/mod" \
  GOFLAGS=-mod=mod GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local GO111MODULE=on GOWORK=off \
  go build -o "$out/lookup-go" .
