# Multi-stage build: the builder runs the same `make build` as CI, so the
# image holds exactly the binary the tests exercised.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN make build VERSION=${VERSION} COMMIT=${COMMIT}

# Static binary on distroless: no shell, no package manager, non-root.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/karpgate /karpgate
USER 65532:65532
ENTRYPOINT ["/karpgate"]
