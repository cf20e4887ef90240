"""The local environment: this machine's sandbox and everything it needs."""
