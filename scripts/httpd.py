#!/usr/bin/env python3
"""Serves a directory on 127.0.0.1 as a static host should serve dist/.

usage: httpd.py DIR PORT [PORTFILE]
PORT 0 picks a free port; the port in use is printed and, if PORTFILE is given,
written there once the server is listening (scripts/e2e waits for it).

- Types: application/wasm for .wasm (WebAssembly.instantiateStreaming needs it),
  whatever the host's mime.types says.
- Precompressed files: scripts/dist writes FILE.br and FILE.gz beside each text and
  wasm file. A request whose Accept-Encoding allows br (then gzip) gets that file with
  Content-Encoding and `Vary: Accept-Encoding`; others get FILE itself. Nothing is
  compressed on the fly.
- Caching: dist/pkg-HASH/ is named by its content (scripts/dist), so it is served
  `immutable` for a year; everything else (index.html, static/) is `no-cache`, that
  is, revalidated each time. Every response has an ETag (the served file's size and
  mtime), and If-None-Match answers 304 with no body.
"""
import email.utils
import functools
import http.server
import os
import re
import sys

IMMUTABLE = re.compile(r"^/pkg-[0-9a-f]{8,}/")
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))


def accepted(header):
    """The codings an Accept-Encoding header allows (q=0 refuses one)."""
    out = set()
    for part in (header or "").split(","):
        fields = part.strip().split(";")
        name = fields[0].strip().lower()
        q = 1.0
        for f in fields[1:]:
            k, _, v = f.strip().partition("=")
            if k.strip() == "q":
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
        if name and q > 0:
            out.add(name)
    return out


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".css": "text/css",
        ".html": "text/html",
        ".svg": "image/svg+xml",
        ".png": "image/png",
    }

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()  # the redirect to DIR/
            path = os.path.join(path, "index.html")
        if not os.path.isfile(path):
            self.send_error(404, "File not found")
            return None
        served, coding = path, None
        if not path.endswith((".br", ".gz")):
            ok = accepted(self.headers.get("Accept-Encoding"))
            for name, ext in ENCODINGS:
                if name in ok and os.path.isfile(path + ext):
                    served, coding = path + ext, name
                    break
        st = os.stat(served)
        etag = f'"{st.st_size:x}-{int(st.st_mtime_ns):x}{"-" + coding if coding else ""}"'
        url_path = self.path.split("?", 1)[0]
        cache = ("public, max-age=31536000, immutable" if IMMUTABLE.match(url_path)
                 else "no-cache")
        if etag in [t.strip() for t in self.headers.get("If-None-Match", "").split(",")]:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Cache-Control", cache)
            self.send_header("Vary", "Accept-Encoding")
            self.end_headers()
            return None
        f = open(served, "rb")
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        if coding:
            self.send_header("Content-Encoding", coding)
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(st.st_size))
        self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
        self.send_header("ETag", etag)
        self.send_header("Cache-Control", cache)
        self.end_headers()
        return f

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    directory, port = sys.argv[1], int(sys.argv[2])
    handler = functools.partial(Handler, directory=directory)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        port = httpd.server_address[1]
        print(f"serving {directory} at http://127.0.0.1:{port}/", flush=True)
        if len(sys.argv) == 4:
            with open(sys.argv[3], "w") as f:
                f.write(f"{port}\n")
        httpd.serve_forever()


if __name__ == "__main__":
    main()
