"""Rendering: narration, the terminal, Markdown, Mermaid, graphs, SVG and the review page."""
