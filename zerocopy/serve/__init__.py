"""`zerocopy serve`: the cameras of a config file run at once as a service (config.py: the file; engine.py:
the runs; cameras.py: each camera's figures; http.py: /health, /metrics, /api/cameras)."""
