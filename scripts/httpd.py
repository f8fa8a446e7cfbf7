#!/usr/bin/env python3
"""Serves a directory on 127.0.0.1 with application/wasm for .wasm files.

usage: httpd.py DIR PORT [PORTFILE]
PORT 0 picks a free port; the port in use is printed and, if PORTFILE is given,
written there once the server is listening (scripts/e2e waits for it).
"""
import functools
import http.server
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    # Browsers refuse WebAssembly.instantiateStreaming without this type; do not
    # rely on the host's mime.types having it.
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".css": "text/css",
        ".html": "text/html",
    }

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


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
