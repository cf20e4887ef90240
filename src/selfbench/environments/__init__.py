"""Where a task's stages run: this machine's sandbox (`local`) or Harbor (`harbor`).

`spec` parses the environment a command chose into one `EnvironmentSpec` (and declares the
options that choose it); `build` turns a spec into the runner validation uses and the options
evaluation's trials use; `process` starts every child process; `harbor` launches Harbor and
holds its options.
"""
