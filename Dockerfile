# syntax=docker/dockerfile:1
# The SQLite driver uses cgo, so the build needs gcc and the runtime glibc.
FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV GOTOOLCHAIN=auto CGO_ENABLED=1
COPY go.mod go.sum ./
# The server requires the Go SDK's module (webhook, decisiontoken) from ./sdk/go.
COPY sdk/go/go.mod sdk/go/go.sum ./sdk/go/
RUN go mod download
COPY . .
# The build context has no .git (.dockerignore), so the version is given:
# docker build --build-arg VERSION=v0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) .
ARG VERSION=dev
ARG COMMIT=
RUN go build -trimpath -buildvcs=false \
    -ldflags="-s -w -X github.com/assent-hq/assent/internal/buildinfo.version=${VERSION} -X github.com/assent-hq/assent/internal/buildinfo.commit=${COMMIT}" \
    -o /out/assent ./cmd/assent

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 assent
COPY --from=build /out/assent /usr/local/bin/assent
USER assent
WORKDIR /home/assent
EXPOSE 8080
ENTRYPOINT ["assent"]
CMD ["serve"]
