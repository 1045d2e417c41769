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
RUN go build -trimpath -ldflags="-s -w" -o /out/assent ./cmd/assent

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 assent
COPY --from=build /out/assent /usr/local/bin/assent
USER assent
WORKDIR /home/assent
EXPOSE 8080
ENTRYPOINT ["assent"]
CMD ["serve"]
