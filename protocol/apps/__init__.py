"""The applications: what both computes with the tools and draws with the renderers, above
both. `docs.py` derives the documents (`docs --write`, `--check`); `explorer.py` serves the
explorer's pages and answers (`explore`). Neither tools/ nor render/ imports them."""
