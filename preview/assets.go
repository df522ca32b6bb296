package preview

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

// The page's own files, and the Mermaid library: mermaid.min.js of the npm package
// mermaid, the version internal/mermaid/testdata/mermaid-check/package-lock.json locks
// (11.17.2, MIT licence: assets/mermaid-LICENSE), gzip-compressed. After upgrading the
// lockfile, refresh the copy (the test TestMermaidCopy fails until then):
//
//go:generate sh -c "gzip -9n < ../internal/mermaid/testdata/mermaid-check/node_modules/mermaid/dist/mermaid.min.js > assets/mermaid.min.js.gz && cp ../internal/mermaid/testdata/mermaid-check/node_modules/mermaid/LICENSE assets/mermaid-LICENSE"
//go:embed assets/index.html assets/app.js assets/app.css assets/mermaid.min.js.gz assets/mermaid-LICENSE
var assets embed.FS

// MermaidVersion is the version of the Mermaid library the page draws with.
const MermaidVersion = "11.17.2"

// MermaidJS returns the embedded mermaid.min.js, decompressed.
func MermaidJS() []byte { return mermaidJS() }

var mermaidJS = sync.OnceValue(func() []byte {
	z, _ := assets.ReadFile("assets/mermaid.min.js.gz")
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		panic("preview: the embedded mermaid.min.js.gz is not gzip: " + err.Error())
	}
	b, err := io.ReadAll(r)
	if err != nil {
		panic("preview: the embedded mermaid.min.js.gz is broken: " + err.Error())
	}
	return b
})

var etags sync.Map // asset name (+ ".gz" when served compressed) -> ETag

// serveAsset serves one of the page's files: mermaid.min.js compressed to a client that
// takes gzip, else decompressed.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	file := name
	gz := name == "mermaid.min.js"
	if gz {
		file += ".gz"
	}
	switch name {
	case "app.js", "app.css", "mermaid.min.js", "mermaid-LICENSE":
	default:
		http.NotFound(w, r)
		return
	}
	data, err := assets.ReadFile("assets/" + file)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	zipped := gz && acceptsGzip(r)
	key := name
	if zipped {
		key += ".gz"
	}
	tag, ok := etags.Load(key)
	if !ok {
		sum := sha256.Sum256(data)
		etag := hex.EncodeToString(sum[:8])
		if zipped {
			etag += "-gzip"
		}
		tag, _ = etags.LoadOrStore(key, `"`+etag+`"`)
	}
	h := w.Header()
	h.Set("ETag", tag.(string))
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	ct := mime.TypeByExtension(path.Ext(name))
	if name == "mermaid-LICENSE" {
		ct = "text/plain; charset=utf-8"
	}
	if strings.HasPrefix(ct, "text/javascript") || name == "app.js" || gz {
		ct = "text/javascript; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	if r.Header.Get("If-None-Match") == tag.(string) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	switch {
	case zipped:
		h.Set("Content-Encoding", "gzip")
	case gz:
		data = mermaidJS()
	}
	w.Write(data)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
