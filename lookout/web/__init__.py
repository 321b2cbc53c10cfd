"""`lookout serve`: the live dashboard (one page, a small JSON API and a Server-Sent Events
stream) on the standard library's ThreadingHTTPServer. Never imported by a hook."""
