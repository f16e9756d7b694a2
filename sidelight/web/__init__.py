"""`sidelight export-web`: the index as a static page that searches in the browser, and its parity check."""
