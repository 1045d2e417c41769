package web

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http"

	"github.com/gin-gonic/gin"
)

// The icon: every page links the SVG (static/icon.svg) at an address that
// changes with its content, cached for long like the stylesheet, and
// /favicon.ico answers what browsers ask for on their own (and anything
// the API serves) with the same mark drawn as a PNG inside an ICO, so no
// browser gets a 404.

// icon is the SVG and the address it is served at.
var icon = newHashedAsset("icon", "svg")

// faviconICO is /favicon.ico: the mark drawn at 32 pixels, as a PNG in an
// ICO container (which every browser reads).
var faviconICO = func() []byte {
	const size = 32
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	accent := color.NRGBA{0x1f, 0x4f, 0xd1, 0xff}
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	// The tick of icon.svg: from (8.5,16.5) to (13.5,21.5) to (23.5,10.5).
	tick := [][2]float64{{8.5, 16.5}, {13.5, 21.5}, {23.5, 10.5}}
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			px, py := float64(x)+.5, float64(y)+.5
			if !insideRounded(px, py, size, 7) {
				continue
			}
			c := accent
			if distToSegment(px, py, tick[0], tick[1]) <= 1.75 || distToSegment(px, py, tick[1], tick[2]) <= 1.75 {
				c = white
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		panic(err)
	}
	var b bytes.Buffer
	// ICONDIR: reserved, type 1 (icon), one image; then its ICONDIRENTRY:
	// width, height, no palette, reserved, one plane, 32 bits, size, offset.
	_ = binary.Write(&b, binary.LittleEndian, [3]uint16{0, 1, 1})
	b.Write([]byte{size, size, 0, 0})
	_ = binary.Write(&b, binary.LittleEndian, [2]uint16{1, 32})
	_ = binary.Write(&b, binary.LittleEndian, [2]uint32{uint32(pngData.Len()), 6 + 16})
	b.Write(pngData.Bytes())
	return b.Bytes()
}()

// insideRounded reports whether (x, y) is inside a size-wide square with
// corners of radius r.
func insideRounded(x, y, size, r float64) bool {
	cx := math.Max(r, math.Min(size-r, x))
	cy := math.Max(r, math.Min(size-r, y))
	return math.Hypot(x-cx, y-cy) <= r
}

func distToSegment(x, y float64, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	t := math.Max(0, math.Min(1, ((x-a[0])*dx+(y-a[1])*dy)/(dx*dx+dy*dy)))
	return math.Hypot(x-(a[0]+t*dx), y-(a[1]+t*dy))
}

// serveIcon serves the SVG the pages link: its address changes with it, so
// it is cached for good; it is a document of its own, so it may load
// nothing.
func serveIcon(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=31536000, immutable")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Security-Policy", "default-src 'none'")
	c.Data(http.StatusOK, "image/svg+xml", icon.body)
}

// serveFavicon serves /favicon.ico, whose address never changes: kept a
// day.
func serveFavicon(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=86400")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(http.StatusOK, "image/x-icon", faviconICO)
}
