"""The local host: runs the app's own functions from function_app.py on one machine, the way the
Functions host does (HTTP over real sockets, queue and timer triggers on the embedded backend)."""
