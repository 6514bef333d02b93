"""results.json -> report.md, PNG plots and the terminal summary (no GPU needed)."""
