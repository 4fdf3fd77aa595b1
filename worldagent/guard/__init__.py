"""The guarded boundaries: every input enters through the one module of its kind (docs/boundaries.md).

- ``files``: a user's file: regular files only (no FIFO, device or socket), a size cap checked before
  reading, inside a root resolved with ``lstat`` semantics (the agent's sandbox resolves through it);
- ``text``: the one decoding policy: invalid UTF-8 and lone surrogates are an error at the edge;
- ``yaml``: the one YAML loader, with size, depth and alias limits (an alias bomb is refused unbuilt);
- ``http``: the ASGI middleware of every service: token, then body size, UTF-8, surrogates and JSON
  depth, all before a route reads the body;
- ``db``: the one database error path: read-only files, schema drift, corrupt files and rows.

JSON text keeps its depth-limited parser in ``worldagent.safejson`` and its file readers in
``worldagent.io`` (which read through ``files``).
"""
