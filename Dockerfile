# syntax=docker/dockerfile:1
#
# The poller's image: a static binary on distroless, running as user 65532, built
# with -tags nodemo (the service without `poller demo` and its in-process NATS and
# Redis servers: a smaller binary and less memory; run the demo from the source).
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t ghcr.io/callbus/poller:dev .
#   docker run --rm ghcr.io/callbus/poller:dev version
#
# BuildKit (the default builder) is needed for the cache mounts; cross-building
# (docker buildx build --platform linux/arm64 …) compiles natively for the target.

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
# Dependencies first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -tags nodemo -trimpath -buildvcs=false -ldflags="-s -w -X main.version=${VERSION}" \
      -o /out/poller ./cmd/poller

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/poller /poller
USER 65532:65532
# /healthz, /readyz and /metrics (CALLBUS_HTTP_ADDR, default :8081).
EXPOSE 8081
ENTRYPOINT ["/poller"]
CMD ["run"]
