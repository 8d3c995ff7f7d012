"""Request plumbing shared by every route: the error handlers (one error body), the ASGI
middleware (security headers, the upload guard that bounds bodies before they are read, the board
gate), and request-body helpers."""
