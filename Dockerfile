# syntax=docker/dockerfile:1
# The training operator image: a static Go binary (/manager) on distroless
# static, running as the nonroot user (65532). Build with `make image`
# (IMG=<registry>/<name>:<tag>); multi-arch with
#   docker buildx build --platform linux/amd64,linux/arm64 -t $IMG .

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS builder
ARG TARGETOS=linux
ARG TARGETARCH
ARG GOPROXY=https://proxy.golang.org
ENV GOPROXY=${GOPROXY} \
    GOFLAGS=-mod=mod \
    GOTOOLCHAIN=local \
    CGO_ENABLED=0
WORKDIR /workspace

# Dependencies first, cached while go.mod/go.sum are unchanged (go.mod
# replaces one module with a folder of third_party/).
COPY go.mod go.sum ./
COPY third_party/ third_party/
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

# Sources (.dockerignore keeps tests, manifests and docs out of the context).
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/manager .

FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.source="https://github.com/seed-d8a409e9/training-operator" \
      org.opencontainers.image.description="Drop-in replacement for the Kubeflow Training Operator v1" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /
COPY --from=builder /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
