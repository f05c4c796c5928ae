# Builds the manager into a distroless, non-root image, with the kubectl-eval
# plugin beside it (docker cp it out, or run it with --entrypoint).
#   docker build -t ghcr.io/eval-operator/eval-operator:dev .
# Multi-platform: docker buildx build --platform linux/amd64,linux/arm64 ...
# `make image` builds the same image without Docker (hack/image): keep the
# paths (/manager, /kubectl-eval), the user and the entrypoint in step with it.
# The builder runs on the build machine's own platform and cross-compiles
# (GOOS/GOARCH below), so an arm64 image is not built under emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH

WORKDIR /workspace
# Modules first, in their own layer, so source edits do not re-download them.
COPY go.mod go.sum ./
RUN go mod download

COPY cmd/ cmd/
COPY api/ api/
COPY internal/ internal/

# The release version and source revision (make docker-build passes the
# Makefile's VERSION and REVISION): --version and evaloperator_build_info.
ARG VERSION=dev
ARG REVISION=unknown
# Static binary (distroless/static has no libc); -trimpath keeps local paths
# out of it. GOARCH is left to the builder's own when TARGETARCH is unset.
RUN LDFLAGS="-s -w -X github.com/eval-operator/eval-operator/internal/buildinfo.version=${VERSION} -X github.com/eval-operator/eval-operator/internal/buildinfo.revision=${REVISION}" && \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="$LDFLAGS" -o manager ./cmd && \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="$LDFLAGS" -o kubectl-eval ./cmd/kubectl-eval

FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.source="https://github.com/eval-operator/eval-operator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
WORKDIR /
COPY --from=builder /workspace/manager /workspace/kubectl-eval ./
# 65532 is distroless's "nonroot"; numeric so runAsNonRoot can verify it.
USER 65532:65532

ENTRYPOINT ["/manager"]
