# syntax=docker/dockerfile:1
# Multi-stage build. The builder runs `make build`, the same command `make
# test` runs in CI (test/e2e/dockerfile_test.go keeps the two identical), so
# the image holds the binary the tests exercised: static (CGO_ENABLED=0),
# trimmed paths, version and commit stamped in.
# make exports GOTOOLCHAIN=go1.27.3: the build fetches that toolchain from
# the Go module proxy, as a developer's make does.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
# Set by BuildKit: cross-compiles for --platform (linux/arm64 for Graviton
# nodes, for example) without emulation.
ARG TARGETOS
ARG TARGETARCH
RUN GOOS=${TARGETOS} GOARCH=${TARGETARCH} make build VERSION=${VERSION} COMMIT=${COMMIT}

# Static binary on distroless: no shell, no package manager, non-root. The
# numeric user lets the kubelet verify runAsNonRoot.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/karpgate /karpgate
USER 65532:65532
ENTRYPOINT ["/karpgate"]
