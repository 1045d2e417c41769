#!/usr/bin/env bash
# Fetches the API viewer (Swagger UI, from the npm registry) and copies the
# few files /api/docs serves into this folder. Run it to upgrade; commit
# what it copies, so the binary never needs the network.
set -euo pipefail
version="${1:-5.35.0}"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "swagger-ui-dist@$version" >/dev/null && tar xzf swagger-ui-dist-*.tgz)
cp "$tmp/package/swagger-ui-bundle.js" "$tmp/package/swagger-ui.css" "$here/"
cat "$tmp/package/LICENSE" "$tmp/package/swagger-ui-bundle.js.LICENSE.txt" >"$here/swagger-ui.LICENSE"
echo "$version" >"$here/swagger-ui.VERSION"
