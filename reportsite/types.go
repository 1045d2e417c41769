package reportsite

import (
	"path"
	"strings"
)

const htmlType = "text/html; charset=utf-8"

// types are the content types files are served with, by extension: a
// fixed table, so a type never depends on the machine's mime files, and
// never sniffed. Anything else is a download.
var types = map[string]string{
	".html": htmlType, ".htm": htmlType,
	".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
	".json": "application/json", ".map": "application/json", ".txt": "text/plain; charset=utf-8",
	".csv": "text/csv; charset=utf-8", ".md": "text/markdown; charset=utf-8", ".xml": "application/xml",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".avif": "image/avif", ".ico": "image/x-icon",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".pdf": "application/pdf", ".wasm": "application/wasm",
	".mp4": "video/mp4", ".webm": "video/webm", ".mp3": "audio/mpeg", ".wav": "audio/wav",
}

func contentType(name string) string {
	if t, ok := types[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}
