"""`selfbench draft`: tasks whose selectors are observed by running the tests (issue 14)."""
