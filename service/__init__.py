"""The HTTP service: `matchlog serve` owns a log and serves the API, the viewer and follow streams."""
