"""`selfbench run`: from a repository to a verified benchmark in one resumable command."""
